"""A tuning cache that makes aotc choose what it otherwise would not (tools/aotc-fuzz and
tests/library/tuned_choices.py): for every convolution of a library's report with more than
one candidate implementation, the candidate the report chose takes 1000 µs; every other
500, but the channel-blocked ones (which --layouts=auto offers where they fit) 1, so that the
plan over the chain runs them wherever they exist and the report did not choose them,
whatever their layout conversions cost."""

import json


BLOCKED = ("pointwise-to-nchwc", "nchwc-pointwise", "nchwc-depthwise", "direct-to-nchwc", "nchwc-direct")


def write_other_choices_cache(report, path, favoured=BLOCKED):
    """Writes the cache for `report` (a parsed <name>.report.json) to path; False when it
    has no convolution. Only the `favoured` channel-blocked kinds take 1 µs: where two
    blocked kinds compete for one conv's input (one reading NCHW, one NCHWc), a second
    cache that favours the one the first left out makes it run."""
    def time_us(name, chosen):
        return 1000.0 if name == chosen else 1.0 if name in favoured else 500.0

    entries = [{"kernel": c["kernel"],
                "times_us": {name: time_us(name, c["chosen"])
                             for name in {*BLOCKED, *(o["name"] for o in c["candidates"])}}}
               for c in report["choices"]]
    path.write_text(json.dumps({"format": "aotc tuning cache", "version": 1, "target": report["target"],
                                "threads": 1, "entries": entries}))
    return bool(entries)
