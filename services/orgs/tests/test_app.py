"""The service skeleton: `create_app(settings, options)` keeps its options in the application
under `keys.OPTIONS`; without options (and under `forge serve`) the defaults apply."""

from __future__ import annotations

from forge_common.app import create_app as create_common_app
from forge_orgs.keys import OPTIONS
from forge_orgs.options import Options
from forge_orgs.service import SERVICE, create_app


def test_create_app_keeps_the_options_it_is_given(settings):
    options = Options()
    assert create_app(settings, options)[OPTIONS] is options


def test_without_options_the_defaults_apply(settings):
    assert create_app(settings)[OPTIONS] == Options()
    assert create_common_app(settings, [SERVICE])[OPTIONS] == Options()
