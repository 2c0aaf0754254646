"""A tuning cache that makes aotc choose what it otherwise would not (tools/aotc-fuzz and
tests/library/tuned_choices.py): for every convolution of a library's report with more than
one candidate implementation, the candidate the report chose takes 1000 µs and every other
500; and the channel-blocked candidates, which a library compiled with --layouts=auto has
where they fit, 1, so that the plan over the chain runs them wherever they exist, whatever
their layout conversions cost."""

import json


BLOCKED = ("pointwise-to-nchwc", "nchwc-pointwise", "nchwc-depthwise")


def write_other_choices_cache(report, path):
    """Writes the cache for `report` (a parsed <name>.report.json) to path; False when it
    has no convolution."""
    entries = [{"kernel": c["kernel"],
                "times_us": {**{o["name"]: 1000.0 if o["name"] == c["chosen"] else 500.0 for o in c["candidates"]},
                             **{name: 1.0 for name in BLOCKED}}}
               for c in report["choices"]]
    path.write_text(json.dumps({"format": "aotc tuning cache", "version": 1, "target": report["target"],
                                "threads": 1, "entries": entries}))
    return bool(entries)
