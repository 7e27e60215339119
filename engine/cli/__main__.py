"""`python -m engine.cli` runs the `daimyo` command."""
import sys

from engine.cli import main

sys.exit(main())
