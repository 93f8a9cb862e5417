"""The course around the library: what the notebooks import to teach, and nothing the library needs.

``notebook``        fast mode, the notebook clock, figures and cached results (re-exported here:
                    ``from grpo_lab.course import start_notebook, pick, show, load_or_run, mean_std_text``)
``exercises``       the exercises' checkers (PASS / FAIL / NOT ATTEMPTED)
``hand_loop``       the GRPO step written by hand (notebook 02b): its loop and its match with train()
``final_answer``    the course's three-sentence answer and its summary figure (notebook 05c)
``widgets``         the advantage calculator and self-check quizzes
``drill``           the interview drill's evidence and quiz (notebooks 06, English and Chinese)
``drill_answers``   the drill's model answers, follow-ups and reading list
``timed_answer``    the drill's "say it aloud" countdown widget
``text_files``      reads the course's text, kept as data in ``text/*.json`` (quiz, claims in Chinese,
                    model answers, follow-ups, reading list, widget labels)
"""

from .notebook import (
    FAST_ENV,
    FIGURE_DIR_ENV,
    RESULTS_DIR_ENV,
    THREADS_ENV,
    NotebookClock,
    describe_result,
    fast_mode,
    load_or_run,
    machine_summary,
    mean_std_seeds,
    mean_std_text,
    pick,
    print_table,
    result_cell,
    show,
    start_notebook,
)

__all__ = [
    "FAST_ENV",
    "FIGURE_DIR_ENV",
    "RESULTS_DIR_ENV",
    "THREADS_ENV",
    "NotebookClock",
    "describe_result",
    "fast_mode",
    "load_or_run",
    "machine_summary",
    "mean_std_seeds",
    "mean_std_text",
    "pick",
    "print_table",
    "result_cell",
    "show",
    "start_notebook",
]
