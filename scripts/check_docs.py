"""Check the built documentation site as a browser sees it.

Serves ``docs/_build/html`` (``./dev docs`` builds it) on localhost, visits every page
reachable from the front page, and reports the pages, the broken internal links (a page or
file that is not served, or a ``#fragment`` the target page has no id for) and the missing
images. With ``--screenshot PAGE=FILE`` (repeatable) it also asks headless chromium for a
picture of a page. Exit status 1 when a link or an image is broken.

    python scripts/check_docs.py
    python scripts/check_docs.py --screenshot index.html=/tmp/front.png \\
        --screenshot measures/m-ndcg.html=/tmp/ndcg.png
"""

import argparse
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "docs" / "_build" / "html"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


class Page(HTMLParser):
    """The links, images and ids of one HTML page."""

    def __init__(self):
        super().__init__()
        self.links, self.images, self.ids = [], [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        elif tag == "link" and attrs.get("href") and attrs.get("rel") in ("stylesheet",):
            self.links.append(attrs["href"])
        elif tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        elif tag == "script" and attrs.get("src"):
            self.links.append(attrs["src"])


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(directory):
    """A server of ``directory`` on a free localhost port, in a thread; its base URL."""
    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def fetch(url):
    """(status, body bytes, content type) of ``url``."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read(), response.headers.get_content_type()
    except urllib.error.HTTPError as error:
        return error.code, b"", ""


def crawl(base):
    """Visit every page reachable from ``base``; (pages, broken links, missing images)."""
    pages, ids, seen, queue = [], {}, {base + "index.html"}, [base + "index.html"]
    links, images = [], []
    status = {}
    while queue:
        url = queue.pop()
        code, body, kind = fetch(url)
        status[url] = code
        if code != 200 or kind != "text/html":
            continue
        parser = Page()
        parser.feed(body.decode("utf-8", "replace"))
        pages.append(url)
        ids[url] = parser.ids
        for href in parser.links:
            target = urllib.parse.urljoin(url, href)
            if not target.startswith(base):
                continue  # external: not checked (the build is offline)
            links.append((url, href, target))
            page = target.split("#", 1)[0]
            if page not in seen:
                seen.add(page)
                queue.append(page)
        images += [(url, src, urllib.parse.urljoin(url, src)) for src in parser.images]
    broken = []
    for url, href, target in links:
        page, _, fragment = target.partition("#")
        if status.get(page) != 200:
            broken.append((url, href, f"HTTP {status.get(page)}"))
        elif fragment and page in ids and urllib.parse.unquote(fragment) not in ids[page]:
            broken.append((url, href, "no such id"))
    missing = [(url, src, f"HTTP {code}") for url, src, target in images
               if (code := fetch(target)[0]) != 200]
    return pages, broken, missing


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def screenshot(browser, url, path, size="1280,900"):
    """Headless chromium's picture of ``url`` in ``path`` (an empty profile each time)."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                               f"--window-size={size}", f"--screenshot={path}", url],
                              capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not os.path.exists(path):
        raise RuntimeError(f"chromium failed on {url}: {done.stderr[-500:]}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", default=str(SITE), help="the built site (docs/_build/html)")
    parser.add_argument("--screenshot", action="append", default=[], metavar="PAGE=FILE",
                        help="a page of the site (index.html) and the PNG to write")
    args = parser.parse_args(argv)
    site = Path(args.site)
    if not (site / "index.html").exists():
        print(f"{site}/index.html: no site; build it with ./dev docs", file=sys.stderr)
        return 2
    server, base = serve(site)
    try:
        pages, broken, missing = crawl(base)
        for url, href, why in broken:
            print(f"broken link: {url[len(base):]} -> {href} ({why})")
        for url, src, why in missing:
            print(f"missing image: {url[len(base):]} -> {src} ({why})")
        print(f"{len(pages)} pages, {len(broken)} broken internal links, "
              f"{len(missing)} missing images")
        if args.screenshot:
            browser = chromium()
            if browser is None:
                print("no chromium on PATH: no screenshots", file=sys.stderr)
                return 2
            for item in args.screenshot:
                page, _, path = item.partition("=")
                screenshot(browser, base + page, path)
                print(f"screenshot of {page}: {path}")
    finally:
        server.shutdown()
    return 1 if broken or missing else 0


if __name__ == "__main__":
    sys.exit(main())
