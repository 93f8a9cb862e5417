"""Widgets are made and closed on the kernel's own thread, never on a run's.

ipywidgets keeps every widget in one dict, and the kernel walks it (on its own thread) when a page asks
for every widget's state: Voila's page does when it opens, JupyterLab's when it reloads. A widget made or
closed by another thread during that walk ends it with "dictionary changed size during iteration"; the
page gets no answer and shows no lab ("Error displaying widget: model not found") or waits for one.
A run's thread may still set values: that adds no widget."""

import threading
from collections.abc import Callable


def on_kernel_thread(job: Callable[[], None]) -> None:
    """Run ``job`` on the kernel's thread: at once when called there or outside a kernel; from another
    thread it is queued on the kernel's event loop and runs once the kernel is between messages."""
    kernel = _kernel()
    if kernel is None or threading.current_thread() is threading.main_thread():
        job()
    else:
        kernel.io_loop.add_callback(job)


def _kernel():
    """The IPython kernel this process runs (None in plain Python or a terminal IPython)."""
    from IPython import get_ipython  # installed with ipywidgets

    kernel = getattr(get_ipython(), "kernel", None)
    return kernel if getattr(kernel, "io_loop", None) is not None else None
