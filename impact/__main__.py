"""`python -m impact` runs the command line."""

import sys

from impact.cli import main

sys.exit(main())
