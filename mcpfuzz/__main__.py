"""`python -m mcpfuzz`: the `mcpfuzz` command, for an environment whose scripts folder is not on PATH."""

from mcpfuzz.cli import main

if __name__ == "__main__":  # not in a worker process, which imports this module under another name
    main()
