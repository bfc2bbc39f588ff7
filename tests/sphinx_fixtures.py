"""A small Sphinx/MyST documentation tree with the markup real trees have: roles, directives,
a toctree, an ``:orphan:`` marker, redirect pages, option and ASCII tables, code fences."""

from __future__ import annotations

from pathlib import Path

PAGES = {
    "index.md": """(home)=
# Harbour documentation

```{toctree}
:maxdepth: 2

install
tides
moorings
options
```

Harbour schedules ferry crossings around the tide tables of small island ports.
See {ref}`the installation guide <install-guide>` before the first run.
""",
    "install.rst": """:orphan:

.. _install-guide:

Installation
============

The installer downloads signed wheels from the package index and verifies each checksum.
It refuses a wheel whose signature does not match the maintainer key.

.. code-block:: python

   import harbour
   harbour.install(channel="stable")

Offline machines read wheels from a local mirror directory instead.
Use :func:`os.path.join` to build the mirror path, e.g. on Windows drives.

.. note::

   The mirror directory must be writable by the service account.
""",
    "tides.md": """# Tide tables

The tide predictor fits harmonic constituents to twelve months of gauge readings.
Each constituent has an amplitude and a phase lag relative to the Greenwich transit.
The predictor extrapolates high water times for the next ninety days.

```{note}
Storm surges are not part of the harmonic model; the surge warning service covers them.
```

```python
from harbour import tides
tides.predict(port="Oban", days=90)
```

Spring tides bring the largest range, neap tides the smallest.
""",
    "moorings.md": """# Moorings

Visiting yachts book a mooring buoy through the harbour master's radio channel.
Each buoy carries a load rating in tonnes painted on its crown.
The harbour master reassigns buoys when a gale warning is broadcast.

- Buoys on the outer ring suit vessels longer than fifteen metres.
- The inner pontoon berths dinghies and tenders free of charge.

Mooring fees are collected at the fuel quay every evening.
""",
    "options.rst": """Configuration options
=====================

.. list-table:: Options
   :header-rows: 1

   * - option
     - meaning
   * - ``tide_source``
     - gauge feed
   * - ``ferry_window``
     - minutes

+----------------+-----------+
| option         | default   |
+================+===========+
| tide_source    | gauge     |
+----------------+-----------+
| ferry_window   | 45        |
+----------------+-----------+

=============  ========
name           value
=============  ========
retry_limit    3
=============  ========

The ferry window sets how many minutes before high water a crossing may depart.
The retry limit caps how often the gauge feed is polled after a timeout.
""",
    "ferries.md": """# Ferry crossings

The ferry planner reads the predicted high water times and proposes departure slots.
A crossing is cancelled when the forecast swell exceeds two metres at the harbour mouth.
Passengers receive a text message with the new slot within five minutes of a cancellation.

```{warning}
Vehicle deck bookings close two hours before departure.
```
""",
    "cargo.rst": """Cargo handling
==============

Cranes on the north quay lift containers of up to thirty tonnes.
The stevedore roster assigns two crane drivers to every shift.
Refrigerated containers draw shore power from the reefer sockets by the warehouse.

.. code-block:: console

   $ harbour cargo list --quay north
""",
}
REDIRECT = """:orphan:

Old page
========

This page has moved. See :doc:`{target}`.
"""
REDIRECTS = {f"old-{number}.rst": target for number, target in
             enumerate(["install", "tides", "moorings", "options", "ferries", "cargo"])}


def write_sphinx_tree(root: Path) -> Path:
    """Write the tree under ``root``; returns it."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in PAGES.items():
        (root / name).write_text(text, encoding="utf-8")
    for name, target in REDIRECTS.items():
        (root / name).write_text(REDIRECT.format(target=target), encoding="utf-8")
    return root
