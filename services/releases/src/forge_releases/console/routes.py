"""The console's routes (docs/console.md), added to the releases service's one route table
before the pages."""

from __future__ import annotations

from aiohttp import web

from . import assets, keys, linux_keys, releases, rollout, rollout_plan, safety, script, settings
from .audit import audit_page


def console_routes(page: str) -> list[web.RouteDef]:
    """`page` is the route table's `/{owner}/{repo}` pattern."""
    edit = f"{page}/releases/edit/{{tag}}"
    return [
        web.get("/-/console.js", script.console_script),
        web.get(f"{page}/releases/new", releases.new_form),
        web.post(f"{page}/releases/new", releases.create),
        web.get(edit, releases.edit_form),
        web.post(edit, releases.update),
        web.post(f"{edit}/assets", assets.upload),
        web.post(f"{edit}/assets/delete", assets.delete),
        web.post(f"{edit}/rollout", rollout.set_rollout),
        web.get(f"{edit}/unpublish", rollout.confirm_unpublish),
        web.post(f"{edit}/unpublish", rollout.unpublish),
        web.get(f"{edit}/withdraw", safety.confirm_withdraw),
        web.post(f"{edit}/withdraw", safety.withdraw),
        web.post(f"{edit}/safety", safety.set_safety),
        web.post(f"{edit}/rollout-plan", rollout_plan.set_plan),
        web.post(f"{edit}/rollout-plan/pause", rollout_plan.pause),
        web.post(f"{edit}/rollout-plan/resume", rollout_plan.resume),
        web.post(f"{edit}/rollout-plan/jump", rollout_plan.jump),
        web.post(f"{edit}/rollout-plan/finish", rollout_plan.finish),
        web.get(f"{page}/settings", settings.repo_settings),
        web.post(f"{page}/settings", settings.save_repo_settings),
        web.get(f"{page}/settings/update-keys", keys.update_keys),
        web.post(f"{page}/settings/update-keys", keys.create_update_key),
        web.post(f"{page}/settings/update-keys/revoke", keys.revoke_update_key),
        web.get(f"{page}/settings/tauri-key", keys.tauri_key),
        web.post(f"{page}/settings/tauri-key", keys.set_tauri_key),
        web.get(f"{page}/settings/linux-key", linux_keys.linux_key),
        web.post(f"{page}/settings/linux-key", linux_keys.change_linux_key),
        web.get(f"{page}/audit", audit_page),
    ]
