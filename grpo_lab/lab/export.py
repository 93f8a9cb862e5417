"""The lab's plot and runs as files, for slides and notes: the runs as JSON (``runs_json``: each seed's
config and history) and as CSV (``runs_csv``: one row per run, seed and step), and the page's download
links for them (``download_links``: data: addresses, which JupyterLab and Voila serve alike, with no
file written on the server)."""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import math
from pathlib import PurePath

from .runs import LabRun

FILE_NAMES = {"plot": "grpo-lab-plot.png", "json": "grpo-lab-runs.json", "csv": "grpo-lab-runs.csv"}
MEDIA_TYPES = {".png": "image/png", ".json": "application/json", ".csv": "text/csv"}
LEADING_COLUMNS = ("step", "samples")  # the CSV's metric columns start with these; the others follow in the order first recorded


def finite(value):
    """A history value as strict JSON can hold it: NaN and infinities (a run that failed on them) become None."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def runs_json(runs: list[LabRun], labels: list[str]) -> bytes:
    """``runs`` (oldest first) with their ``labels`` (the settings in words) as JSON: {"runs": [{"run",
    "name", "pinned", "hidden", "status", "settings", "seeds": [{"config", "history"}, ...]}, ...]};
    a config is TrainConfig.to_dict(), a history the per-step dicts train() records."""
    records = [
        {
            "run": run.number,
            "name": run.name,
            "pinned": run.pinned,
            "hidden": run.hidden,
            "status": run.status,
            "settings": label,
            "seeds": [
                {"config": config.to_dict(), "history": [{key: finite(value) for key, value in record.items()} for record in history]}
                for config, history in zip(run.configs, run.histories)
            ],
        }
        for run, label in zip(runs, labels)
    ]
    return json.dumps({"runs": records}, indent=1, ensure_ascii=False, allow_nan=False).encode()


def runs_csv(runs: list[LabRun], labels: list[str]) -> bytes:
    """``runs`` (oldest first) with their ``labels`` as CSV, one row per run, seed and recorded step:
    run, name, settings, seed, then every metric any step recorded (empty where a step did not)."""
    histories = [(run, label, config.seed, history) for run, label in zip(runs, labels) for config, history in zip(run.configs, run.histories)]
    recorded = dict.fromkeys(key for *_, history in histories for record in history for key in record)
    metrics = [key for key in LEADING_COLUMNS if key in recorded] + [key for key in recorded if key not in LEADING_COLUMNS]
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(["run", "name", "settings", "seed", *metrics])
    for run, label, seed, history in histories:
        for record in history:
            writer.writerow([run.number, run.name, label, seed, *(record.get(key, "") for key in metrics)])
    return text.getvalue().encode()


def download_links(files: dict[str, bytes]) -> str:
    """HTML links that download each of ``files`` (file name -> contents) from the page itself."""
    links = []
    for name, contents in files.items():
        address = f"data:{MEDIA_TYPES[PurePath(name).suffix]};base64,{base64.b64encode(contents).decode()}"
        links.append(f"<a download='{html.escape(name)}' href='{address}'>{html.escape(name)}</a> ({len(contents) / 1000:.0f} kB)")
    return " &middot; ".join(links)
