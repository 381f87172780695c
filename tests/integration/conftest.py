import sys
from pathlib import Path

# spawned pool workers import test helpers by module name
sys.path.insert(0, str(Path(__file__).parent))
