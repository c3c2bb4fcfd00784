"""`python -m memmesh.quality` runs `make eval-quality`."""

from memmesh.quality.evaluate import main

raise SystemExit(main())
