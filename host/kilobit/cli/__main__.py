import sys

from kilobit.cli import main

sys.exit(main())
