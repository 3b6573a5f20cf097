# SPDX-License-Identifier: GPL-2.0-or-later
"""The package `pollux`: importable without torch (the agent protocol, the limits, the
learning-rate rule), its PyTorch parts loaded on first use, no top-level module left."""

import os
import subprocess
import sys
import unittest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BLOCK_TORCH = """
import importlib.abc, sys
class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this test")
sys.meta_path.insert(0, NoTorch())
"""


def run_python(code):
    return subprocess.run([sys.executable, "-B", "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=PYTHON_DIR), timeout=120)


class PackageTest(unittest.TestCase):
    def test_the_protocol_needs_no_torch(self):
        done = run_python(BLOCK_TORCH + """
import pollux, pollux.protocol, pollux.limits, pollux.lr
limits = pollux.BatchSizeLimits(init_batch_size=32, max_batch_size=512, min_local_bsz=8,
                                max_local_bsz=256)
with pollux.Trainer.from_limits(limits) as trainer:
    assert not trainer.connected
assert pollux.lr_scale(128, 32, "sqrt") == 2.0
assert "torch" not in sys.modules
try:
    pollux.AdaptiveDataParallel
except ImportError:
    print("torch parts need torch")
""")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, "torch parts need torch\n")

    def test_every_public_name_resolves_and_is_documented(self):
        done = run_python("""
import importlib.util, pollux
if importlib.util.find_spec("torch") is None:
    names = ["BatchSizeLimits", "Decision", "Trainer", "lr_scale"]
else:
    names = [name for name in pollux.__all__ if not name.startswith("__")]
for name in names:
    value = getattr(pollux, name)
    if callable(value):
        assert value.__doc__, name
print(len(names))
""")
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_no_top_level_module_is_left(self):
        self.assertEqual(sorted(name for name in os.listdir(PYTHON_DIR)
                                if name.endswith(".py")), [])

    def test_limits_are_checked(self):
        sys.path.insert(0, PYTHON_DIR)
        import pollux
        limits = pollux.BatchSizeLimits(init_batch_size=32)
        self.assertEqual((limits.max_batch_size, limits.min_local_bsz, limits.max_local_bsz),
                         (32, 1, 32))
        for bad in (dict(init_batch_size=0), dict(init_batch_size=8, max_batch_size=4),
                    dict(init_batch_size=8, min_local_bsz=9, max_local_bsz=4),
                    dict(init_batch_size=8.5)):
            with self.assertRaises(ValueError, msg=bad):
                pollux.BatchSizeLimits(**bad)


if __name__ == "__main__":
    unittest.main()
