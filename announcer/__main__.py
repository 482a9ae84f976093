"""Allow ``python -m announcer``."""

from announcer.cli.main import main

raise SystemExit(main())
