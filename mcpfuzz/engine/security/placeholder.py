"""The word a server's command writes for the temporary workspace of --security (light: the command line checks it
before anything else is imported)."""

WORKSPACE_PLACEHOLDER = "{workspace}"
