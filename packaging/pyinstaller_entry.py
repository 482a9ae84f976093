"""The frozen program's entry point (packaging/announcer.spec): the ``announcer`` command."""

from announcer.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
