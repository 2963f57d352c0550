import sys

from tools.sanitize import main

sys.exit(main(sys.argv[1:]))
