"""Update feeds for the desktop updaters people ship with (Squirrel.Mac through the
update.electronjs.org URL shape, Squirrel.Windows, electron-updater, Tauri, Velopack), generated
from the stored releases, assets and upload hashes, beside the spec's own update check (read/)."""
