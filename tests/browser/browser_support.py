"""What kiln's browser tests share: finding headless Chromium."""
import shutil


def find_chromium():
    """The path of a Chromium (or Chrome) on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None
