"""A tuning cache that makes aotc choose what it otherwise would not (tools/aotc-fuzz and
tests/library/tuned_choices.py): for every convolution of a library's report with more than
one candidate implementation, the candidate the report chose takes 2 µs and every other 1."""

import json


def write_other_choices_cache(report, path):
    """Writes the cache for `report` (a parsed <name>.report.json) to path; False when no
    convolution has more than one candidate."""
    entries = [{"kernel": c["kernel"],
                "times_us": {o["name"]: 2.0 if o["name"] == c["chosen"] else 1.0 for o in c["candidates"]}}
               for c in report["choices"] if len(c["candidates"]) > 1]
    path.write_text(json.dumps({"format": "aotc tuning cache", "version": 1, "target": report["target"],
                                "threads": 1, "entries": entries}))
    return bool(entries)
