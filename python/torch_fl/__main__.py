from torch_fl._cli import main

raise SystemExit(main())
