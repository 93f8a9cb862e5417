"""Shared test setup: CPU only, and a fixed small thread count so runs are comparable."""

import os

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
