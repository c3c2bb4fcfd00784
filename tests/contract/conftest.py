import sys
from pathlib import Path

# The generated tests import their request builder from this folder.
sys.path.insert(0, str(Path(__file__).parent))
