"""The course around the library: what the notebooks import to teach, and nothing the library needs.

``notebook``        fast mode, the notebook clock, figures and cached results (re-exported here:
                    ``from grpo_lab.course import start_notebook, pick, show, load_or_run, mean_std_text``)
``exercises``       the exercises' checkers (PASS / FAIL / NOT ATTEMPTED)
``hand_loop``       the GRPO step written by hand (notebook 02b): its loop and its match with train()
``final_answer``    the course's answer and its summary figure (notebook 05c)
``widgets``         the advantage calculator and self-check quizzes
``drill``           the claims' verdicts: one plain sentence each for the units (00-05c) and the drill (06,
                    English and Chinese), the regimes (04a), the long findings for 08; and the drill's quiz
``drill_answers``   the drill's model answers, follow-ups and reading list
``timed_answer``    the drill's "say it aloud" countdown widget
``debug_round``     the drill's "find the bugs" round: a GRPO step with four planted bugs and its checker
                    (re-exported: ``print_buggy_step, check_debug_round, buggy_grpo_step``)
``scale_cost``      memory and time of one PPO step and one GRPO step of a 0.5B-72B model, and its widget
                    (re-exported: ``ScaleSetup, step_cost, compare_steps, cost_table, scale_cost_widget``)
``text_files``      reads the course's text, kept as data in ``text/*.json`` (quiz, claims in Chinese,
                    model answers, follow-ups, reading list, widget labels)
"""

from .debug_round import buggy_grpo_step, check_debug_round, print_buggy_step
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
from .scale_cost import ScaleSetup, compare_steps, cost_table, scale_cost_widget, step_cost

__all__ = [
    "FAST_ENV",
    "FIGURE_DIR_ENV",
    "RESULTS_DIR_ENV",
    "ScaleSetup",
    "THREADS_ENV",
    "NotebookClock",
    "buggy_grpo_step",
    "check_debug_round",
    "compare_steps",
    "cost_table",
    "describe_result",
    "fast_mode",
    "load_or_run",
    "machine_summary",
    "mean_std_seeds",
    "mean_std_text",
    "pick",
    "print_buggy_step",
    "print_table",
    "result_cell",
    "scale_cost_widget",
    "show",
    "start_notebook",
    "step_cost",
]
