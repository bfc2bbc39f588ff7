"""A small Sphinx/MyST documentation tree with the markup real trees have: roles, directives,
a toctree, an ``:orphan:`` marker, redirect pages, option and ASCII tables, code fences, MyST
labels (``(name)=``) before headings, intersphinx references (``{term}`text <pypug:Target>```,
``{ref}`pypug:Target```, ``:term:`...```), nested headings (chunk titles that are heading
paths) and a "This is now covered in ..." stub page."""

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
To plan a week of crossings, run ``harbour plan --days 7`` in the project directory.
If the tide feed is unreachable, Harbour falls back to the last published tables.
""",
    "install.rst": """:orphan:

.. _install-guide:

Installation
============

The installer downloads signed wheels from the package index and verifies each checksum.
It refuses a wheel whose signature does not match the maintainer key.
To install from a mirror, pass ``--mirror`` with the mirror's path.
If a checksum does not match, delete the cached wheel and run the installer again.

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
To predict another port, call ``tides.predict`` with the port's gauge name.
If the gauge readings cover fewer than six months, the prediction is marked provisional.

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
To reserve a buoy for a regatta, email the harbour office a week ahead.
If a buoy's load rating is too low for your vessel, the radio operator offers a pontoon berth.

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
To change the ferry window, set ``ferry_window`` in ``harbour.toml``.
If ``tide_source`` names an unknown feed, Harbour refuses to start and names the setting.
""",
    "ferries.md": """# Ferry crossings

The ferry planner reads the predicted high water times and proposes departure slots.
A crossing is cancelled when the forecast swell exceeds two metres at the harbour mouth.
Passengers receive a text message with the new slot within five minutes of a cancellation.
To book a vehicle deck place, call the ferry office with the vehicle's length.
If a passenger misses the rebooked slot, the ticket stays valid for the next crossing.

```{warning}
Vehicle deck bookings close two hours before departure.
```
""",
    "triage.md": """(triage-guide)=
# Issue triage

(triage issues)=
## Triage issues

(reaching-resolution)=
### Reaching resolution

A maintainer closes an issue once the reporter confirms that the fix works.
To reopen a closed bug report, comment with the version that still fails.
When a user may be having the same problem, the maintainer links the duplicate reports together.
The {term}`release manager <pypug:Release Manager>` tags every fixed issue before the release is cut.

### Labels

Stale issues receive a reminder label after thirty days without a reply.
To keep a stale bug report open, add the ``pinned`` label.
A fixed version is written with the {ref}`pypug:Version Specifier` syntax of the packaging guide.
Command is on CLI.
""",
    "specifiers.md": """(version-specifiers)=
# Version specifiers

This is now covered in {ref}`pypug:Version Specifier`.
""",
    "cargo.rst": """Cargo handling
==============

Cranes on the north quay lift containers of up to thirty tonnes.
Every container travels with a :term:`bill of lading <pypug:Bill of Lading>` that the shipping line issues.
The stevedore roster assigns two crane drivers to every shift.
Refrigerated containers draw shore power from the reefer sockets by the warehouse.
To book a crane slot, file a request with the stevedore office a day ahead.
If a container exceeds thirty tonnes, the mobile crane lifts it from the south quay.

.. code-block:: console

   $ harbour cargo list --quay north
""",
}
REDIRECT = """:orphan:

Old page
========

This page has moved. See :doc:`{target}`.
"""
REDIRECTS = {
    f"old-{number}.rst": target
    for number, target in enumerate(["install", "tides", "moorings", "options", "ferries", "cargo"])
}


def write_sphinx_tree(root: Path) -> Path:
    """Write the tree under ``root``; returns it."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in PAGES.items():
        (root / name).write_text(text, encoding="utf-8")
    for name, target in REDIRECTS.items():
        (root / name).write_text(REDIRECT.format(target=target), encoding="utf-8")
    return root


# Build configuration a real Sphinx tree carries beside its pages: never documentation.
BUILD_FILES = {
    "conf.py": 'project = "Harbour"\nextensions = ["myst_parser", "sphinx.ext.intersphinx"]\n'
    'html_theme = "furo"\n'
    'intersphinx_mapping = {"pypug": ("https://packaging.python.org/en/latest/", None)}\n',
    "setup.py": "from setuptools import setup\n\nsetup(name='harbour-docs', version='1.0')\n",
    "noxfile.py": "import nox\n\n\n@nox.session\ndef docs(session):\n"
    "    session.run('sphinx-build', '-b', 'html', '.', '_build')\n",
    "Makefile": "SPHINXBUILD = sphinx-build\n\nhtml:\n\t$(SPHINXBUILD) -b html . _build/html\n",
    "tox.ini": "[tox]\nenvlist = docs\n\n[testenv:docs]\ncommands = sphinx-build -b html . _build\n",
    "requirements-docs.txt": "sphinx>=7\nmyst-parser\nfuro\n",
}
# Pages with the structures that broke the offline generators: an RST title with an overline,
# subsections with several adornment styles, a key sentence before a code block, settings that
# share words with the configuration page, class names, "PEP 517", and an ordered list.
SETTINGS_PAGES = {
    "configuration.rst": """.. _configuration:

=====================
Configuration file
=====================

Harbour reads its settings from the configuration file ``harbour.toml`` in the project directory.
Each setting of the configuration file has a default value and a short description.

Sections
--------

The file is read once when the service starts, and a changed setting needs a restart.
Every section of the file is named after the component whose setting it holds.

Precedence
----------

An environment variable overrides the value of the same setting in the configuration file.
""",
    "timeouts.rst": """Network timeouts
================

The ``feed_timeout`` setting gives the 30 seconds Harbour waits for the gauge feed before it retries.
Its default value is 30 seconds; set it in the ``[network]`` section of the configuration file:

.. code-block:: toml

   [network]
   feed_timeout = 45

After 3 failed retries the BestCandidateResult of the previous poll is served instead.
The GaugeClient logs every retry with the port name and the elapsed time.
""",
    "build-backend.md": """# Build backends

Harbour builds its plugins with a build backend as PEP 517 defines it, and reads the backend name from pyproject.toml.
The PluginBuilder calls the backend hooks in an isolated environment since release 2021.

1. The PluginBuilder creates a fresh environment for every plugin build.
2. The builder installs the requirements the backend lists for the wheel.
3. The WheelCache keeps each built wheel for 14 days before it is removed.
""",
}


def write_build_files(root: Path) -> Path:
    """Write the build configuration files under ``root``; returns it."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in BUILD_FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def write_settings_pages(root: Path) -> Path:
    """Write the settings pages under ``root`` (beside the tree or alone); returns it."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in SETTINGS_PAGES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root
