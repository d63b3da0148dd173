"""`python -m mcpfuzz.cli`."""

from mcpfuzz.cli.main import main

if __name__ == "__main__":  # not in a worker process, which imports this module under another name
    main()
