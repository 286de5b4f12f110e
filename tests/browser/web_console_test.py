#!/usr/bin/env python3
"""kiln-harness's and kiln-controller's web consoles as their users see them.

usage: web_console_test.py BIN_DIR DATA_DIR [SCREENSHOT_DIR]

Starts two real kiln-harness processes (host backend) with --http-listen:
- one with --tokens (an operator and two teams): what each viewer may see, the login form and its
  cookie, JSON at the same paths, and that nothing changes state;
- one on loopback without tokens (every viewer is the operator), whose pages headless Chromium
  renders: each page's text is checked in the DOM Chromium built, and its screenshot in pixels;
  the run page's latency chart and the leaderboard's score chart must draw their boxes and bars
  (a test that fails when a chart is empty); a run made a profile in the archive shows its
  Nsight Compute table.
Then a kiln-controller with --http-listen runs a short sweep campaign on a third harness, and its
campaign page must draw the best-latency line and the budget bars.
Screenshots go to SCREENSHOT_DIR when given (docs/images/ holds copies).
"""
import hashlib
import http.client
import json
import os
import re
import shutil
import sqlite3
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse

from PIL import Image

from browser_support import find_chromium

CANDIDATE = (0x4E, 0x79, 0xA7)  # web/web_pages.cc: candidate boxes, score bars
REFERENCE = (0xF2, 0x8E, 0x2B)  # reference boxes

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)


class Service:
    """A kiln-harness or kiln-controller with --http-listen 127.0.0.1:0, started and waited for:
    its "PROGRAM listening on" and "PROGRAM web console on" lines give `address` and `console`.
    Its stderr goes to WORK/NAME.log."""

    def __init__(self, bin_dir, work, name, program, args):
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, program), "--listen", "127.0.0.1:0", "--http-listen",
             "127.0.0.1:0"] + args, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.address = self.console = None
        deadline = time.time() + 60
        while time.time() < deadline and (self.address is None or self.console is None):
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.startswith(program + " listening on "):
                self.address = line.split()[-1]
            if line.startswith(program + " web console on "):
                self.console = line.split()[-1]
        if self.address is None or self.console is None:
            self.stop()
            raise SystemExit(f"{name}: {program} did not come up; see {self.log.name}")
        self.port = int(self.console.rsplit(":", 1)[1])

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def Harness(bin_dir, work, name, extra):
    """A kiln-harness on the host backend with its data in WORK/NAME."""
    data_dir = os.path.join(work, name)
    os.makedirs(data_dir)
    return Service(bin_dir, work, name, "kiln-harness",
                   ["--data-dir", data_dir, "--backend", "host", "--quiet"] + extra)


def kiln(bin_dir, address, token, *args):
    cmd = [os.path.join(bin_dir, "kiln"), "--server", address]
    if token:
        cmd += ["--token", token]
    result = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=300)
    return result


def submit(bin_dir, address, token, solution):
    r = kiln(bin_dir, address, token, "submit", "--definition", "scale_add_f32", "--solution",
             solution, "--json")
    try:
        return json.loads(r.stdout)["run_id"]
    except (ValueError, KeyError):
        raise SystemExit(f"submit {solution} failed ({r.returncode}): {r.stderr[-2000:]}")


def get(port, path, headers=None, method="GET", body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read().decode("utf-8", "replace")
    return resp.status, dict((k.lower(), v) for k, v in resp.getheaders()), data


def chromium(browser, home, url, *mode):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={home}/profile",
           "--default-background-color=ffffffff"] + list(mode) + [url]
    result = subprocess.run(cmd, env=dict(os.environ, HOME=home), capture_output=True,
                            text=True, timeout=120)
    if result.returncode != 0:
        raise AssertionError(f"chromium {mode} {url} failed: {result.stderr[-2000:]}")
    return result.stdout


def colour_pixels(img, colour, tolerance=30):
    count = 0
    for pixel in img.getdata():
        if sum(abs(a - b) for a, b in zip(pixel, colour)) <= tolerance:
            count += 1
    return count


def access_checks(bin_dir, data, work):
    tokens = {"ops": ("operator", "t-ops-0123456789"), "red": ("team", "t-red-0123456789"),
              "blue": ("team", "t-blue-0123456789")}
    path = os.path.join(work, "tokens")
    with open(path, "w") as f:
        for name, (role, token) in tokens.items():
            f.write(f"{name} {role} {hashlib.sha256(token.encode()).hexdigest()}\n")
    h = Harness(bin_dir, work, "secured", ["--tokens", path])
    try:
        ops, red, blue = (tokens[n][1] for n in ("ops", "red", "blue"))
        r = kiln(bin_dir, h.address, ops, "defs", "add", os.path.join(data, "scale_add_f32.json"),
                 "--workloads", os.path.join(data, "scale_add_f32_single.jsonl"))
        check(r.returncode == 0, "the operator registers scale_add_f32" +
              ("" if r.returncode == 0 else ": " + r.stderr[-300:]))
        red_run = submit(bin_dir, h.address, red, os.path.join(data, "solutions/correct.json"))
        blue_run = submit(bin_dir, h.address, blue, os.path.join(data, "solutions/correct.json"))
        p = h.port
        status, _, body = get(p, "/")
        check(status == 401 and 'name="token"' in body,
              "no token: 401 and the login form")
        status, _, body = get(p, "/", {"Accept": "application/json"})
        check(status == 401 and json.loads(body)["error"]["code"] == "UNAUTHENTICATED",
              "no token, JSON: 401 with the error's code")
        status, _, body = get(p, "/", {"Authorization": "Bearer " + red})
        check(status == 200 and "Devices" in body, "a team's bearer token sees the node page")
        status, _, body = get(p, "/", {"Authorization": "Bearer nosuch-token"})
        check(status == 401 and "does not know that token" in body, "an unknown token: 401")
        # The login form sets an HttpOnly cookie that then stands for the token.
        status, headers, _ = get(p, "/login", {"Content-Type": "application/x-www-form-urlencoded"},
                                 "POST", urllib.parse.urlencode({"token": red}))
        cookie = headers.get("set-cookie", "")
        check(status == 303 and cookie.startswith("kiln_token=") and "HttpOnly" in cookie and
              "SameSite=Strict" in cookie, "POST /login: 303 and an HttpOnly cookie")
        jar = {"Cookie": cookie.split(";")[0]}
        status, _, body = get(p, "/runs", jar)
        check(status == 200 and red_run in body,
              "with the cookie, a team lists runs (summaries, as ListRuns gives a team)")
        status, _, body = get(p, "/runs/" + blue_run, jar)
        check(status in (403, 404) and blue_run not in body.split("<h1>")[0],
              f"another team's run is refused ({status})")
        # A run's artifacts: the operator downloads one; another team is refused it.
        status, _, body = get(p, "/runs/" + blue_run, {"Authorization": "Bearer " + ops})
        links = re.findall(r'<a href="(/runs/[0-9a-f]+/artifacts/[^"/]+/[^"/]+)"', body)
        check(status == 200 and links, f"a run page links its artifacts ({links[:2]})")
        if links:
            status, _, art = get(p, links[0], {"Authorization": "Bearer " + ops})
            check(status == 200 and art, f"the operator downloads {links[0]} ({status})")
            status, _, _ = get(p, links[0], jar)
            check(status in (403, 404), f"another team is refused {links[0]} ({status})")
        status, _, body = get(p, "/runs/" + red_run, {**jar, "Accept": "application/json"})
        check(status == 200 and json.loads(body)["run_id"] == red_run and
              json.loads(body)["status"] == "PASSED", "a team's own run as JSON")
        status, _, body = get(p, "/definitions/scale_add_f32", jar)
        check(status == 200 and "red" in body and "blue" in body,
              "the leaderboard is public: a team sees every team's entry")
        status, _, body = get(p, "/runs", {"Authorization": "Bearer " + ops})
        check(status == 200 and red_run in body and blue_run in body,
              "the operator lists every team's runs")
        status, headers, _ = get(p, "/login",
                                 {"Content-Type": "application/x-www-form-urlencoded"}, "POST",
                                 urllib.parse.urlencode({"token": "nosuch-token"}))
        check(status == 401 and "set-cookie" not in headers,
              "POST /login with an unknown token: 401, no cookie")
        for method in ("PUT", "DELETE", "PATCH"):
            status, _, _ = get(p, "/runs/" + red_run, {"Authorization": "Bearer " + ops}, method)
            check(status in (404, 405), f"{method} changes nothing ({status})")
        status, _, body = get(p, "/runs?status=passed", {"Authorization": "Bearer " + ops})
        check(status == 400 and "unknown status" in body, "a bad status filter names the field")
        odd = 'no"such\\status\n'
        status, _, body = get(p, "/runs?status=" + urllib.parse.quote(odd),
                              {"Authorization": "Bearer " + ops, "Accept": "application/json"})
        try:
            message = json.loads(body)["error"]["message"]
        except (ValueError, KeyError):
            message = None
        check(status == 400 and message is not None and odd in message,
              "an error's JSON stays valid whatever the message holds (quotes, backslash, newline)")
    finally:
        h.stop()


def exposure_checks(bin_dir, work):
    """A console on a non-loopback address follows the gRPC port's rule: no tokens, no start."""
    for program, args in (("kiln-harness", ["--data-dir", os.path.join(work, "exposed"),
                                            "--backend", "host", "--quiet"]),
                          ("kiln-controller", ["--data-dir", os.path.join(work, "exposed-c"),
                                               "--harness", "127.0.0.1:1"])):
        r = subprocess.run([os.path.join(bin_dir, program), "--listen", "127.0.0.1:0",
                            "--http-listen", "0.0.0.0:0"] + args,
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 2 and "--http-listen" in r.stderr and "--tokens" in r.stderr,
              f"{program} refuses --http-listen 0.0.0.0:0 without --tokens")


def tls_checks(bin_dir, work):
    """A harness serving TLS serves its console over HTTPS with the same certificate."""
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
                        "subjectAltName=IP:127.0.0.1"], capture_output=True, text=True)
    if r.returncode != 0:
        print("SKIP TLS: openssl cannot make a certificate: " + r.stderr[-500:])
        return
    token = "t-tls-0123456789"
    tokens = os.path.join(work, "tls-tokens")
    with open(tokens, "w") as f:
        f.write(f"ops operator {hashlib.sha256(token.encode()).hexdigest()}\n")
    h = Harness(bin_dir, work, "tls", ["--tokens", tokens, "--tls-cert", cert, "--tls-key", key])
    try:
        check(h.console.startswith("https://"), "with TLS the console is https: " + h.console)
        context = ssl.create_default_context(cafile=cert)
        conn = http.client.HTTPSConnection("127.0.0.1", h.port, timeout=60, context=context)
        conn.request("GET", "/", headers={"Authorization": "Bearer " + token})
        resp = conn.getresponse()
        check(resp.status == 200 and "Devices" in resp.read().decode(),
              "the node page over HTTPS, the harness's certificate verified")
        conn.request("POST", "/login", body=urllib.parse.urlencode({"token": token}),
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        resp = conn.getresponse()
        resp.read()
        check("Secure" in (resp.getheader("Set-Cookie") or ""), "under TLS the cookie is Secure")
        try:
            get(h.port, "/")
            plain = True
        except (http.client.HTTPException, OSError):
            plain = False
        check(not plain, "plain HTTP gets no page from the TLS console")
    finally:
        h.stop()
    mutual_tls_checks(bin_dir, work, tokens, token)


def mutual_tls_checks(bin_dir, work, tokens, token):
    """With --tls-client-ca the console, too, wants a client certificate the CA signed."""
    d = os.path.join(work, "mtls-certs")
    os.makedirs(d)
    san = os.path.join(d, "san.ext")
    with open(san, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    steps = [
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
         "-days", "2", "-subj", "/CN=kiln-test-ca"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
         "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key", "-out", "client.csr",
         "-subj", "/CN=ops"],
        ["x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-CAcreateserial", "-out", "client.pem", "-days", "2"],
    ]
    for step in steps:
        r = subprocess.run(["openssl"] + step, cwd=d, capture_output=True, text=True)
        if r.returncode != 0:
            print("SKIP mutual TLS: openssl " + " ".join(step[:2]) + ": " + r.stderr[-500:])
            return
    p = lambda name: os.path.join(d, name)  # noqa: E731
    h = Harness(bin_dir, work, "mtls", ["--tokens", tokens, "--tls-cert", p("server.pem"),
                                        "--tls-key", p("server.key"), "--tls-client-ca",
                                        p("ca.pem")])
    try:
        def fetch(with_cert):
            context = ssl.create_default_context(cafile=p("ca.pem"))
            if with_cert:
                context.load_cert_chain(p("client.pem"), p("client.key"))
            conn = http.client.HTTPSConnection("127.0.0.1", h.port, timeout=60, context=context)
            conn.request("GET", "/", headers={"Authorization": "Bearer " + token})
            resp = conn.getresponse()
            return resp.status, resp.read().decode()

        status, body = fetch(True)
        check(status == 200 and "Devices" in body,
              "mutual TLS: with a client certificate the CA signed, the node page")
        try:
            status, _ = fetch(False)
            refused = False
        except (ssl.SSLError, http.client.HTTPException, OSError):
            refused = True
        check(refused, "mutual TLS: without a client certificate, no page even with a token")
    finally:
        h.stop()


def rendering_checks(bin_dir, data, work, shots):
    browser = find_chromium()
    if browser is None:
        print("SKIP rendering: no chromium on PATH (apt-get install chromium)")
        return
    h = Harness(bin_dir, work, "open", [])
    try:
        r = kiln(bin_dir, h.address, None, "defs", "add", os.path.join(data, "scale_add_f32.json"),
                 "--workloads", os.path.join(data, "scale_add_f32.jsonl"))
        check(r.returncode == 0, "scale_add_f32 registered" +
              ("" if r.returncode == 0 else ": " + r.stderr[-300:]))
        good = submit(bin_dir, h.address, None, os.path.join(data, "solutions/correct.json"))
        bad = submit(bin_dir, h.address, None,
                     os.path.join(data, "solutions/output_not_written"))
        home = os.path.join(work, "chromium")
        os.makedirs(home)
        base = h.console

        def page(path, name, height=1100, width=1200):
            dom = chromium(browser, home, base + path, "--dump-dom")
            png = os.path.join(shots, name + ".png")
            chromium(browser, home, base + path, f"--window-size={width},{height}",
                     f"--screenshot={png}")
            return dom, Image.open(png).convert("RGB")

        dom, img = page("/", "node", 800)
        check("Devices" in dom and "host" in dom and "Queue" in dom and "Sandbox:" in dom,
              "node page: devices, queue, sandbox")
        # A node without a CUDA GPU says why Nsight Compute cannot profile there.
        check("Nsight Compute:</strong> unavailable: no CUDA GPU" in dom,
              "node page: whether Nsight Compute can profile, and why not")
        check(len(set(img.getdata())) > 8, "node page: the screenshot is not blank")
        dom, img = page("/definitions", "definitions", 600)
        check('href="/definitions/scale_add_f32"' in dom, "definitions page links the definition")
        # rule=best: each principal's best PASSED run (the latest one here did not pass).
        dom, img = page("/definitions/scale_add_f32?rule=best", "leaderboard", 800)
        bars = re.findall(r'<rect class="bar"[^>]* width="([0-9.]+)"', dom)
        check(len(bars) == 1 and float(bars[0]) > 10, f"leaderboard: one score bar drawn {bars}")
        # The bar is 18 px high and as wide as the score makes it (a host kernel's score varies
        # from run to run): at least 60 % of its area must show in the bar's colour (the
        # interval's 1 px line crosses it).
        area = float(bars[0]) * 18 if bars else 0
        seen = colour_pixels(img, CANDIDATE)
        check(area > 0 and seen >= 0.6 * area,
              f"leaderboard: the bar is seen in the pixels ({seen} of {area:.0f})")
        dom, img = page("/definitions/scale_add_f32/report?rule=best", "report", 1400)
        check("fast_p" in dom and colour_pixels(img, CANDIDATE) > 200,
              "report page: the fast_p curve and speedup bars are drawn")
        dom, img = page("/runs/" + good, "run", 1100)
        boxes = re.findall(r'<rect class="box"[^>]* width="([0-9.]+)"', dom)
        check(len(boxes) == 6 and all(float(w) >= 2 for w in boxes),
              f"run page: a candidate and a reference box for each of 3 workloads ({len(boxes)})")
        check(colour_pixels(img, CANDIDATE) > 100 and colour_pixels(img, REFERENCE) > 100,
              "run page: candidate and reference boxes are seen in the pixels")
        # The distributions come from the raw samples the harness archived: a group of dots per
        # box, one dot per timed call.
        groups = re.findall(r'<g class="samples"[^>]*><title>(candidate|reference): ([0-9]+) samples',
                            dom)
        dots = dom.count("<circle")
        check(len(groups) == 6 and all(int(n) > 0 for _, n in groups)
              and dots >= sum(min(int(n), 2000) for _, n in groups) - 6,
              f"run page: every box drawn from its raw samples ({groups[:2]}..., {dots} dots)")
        check("PASSED" in dom and "kernel.cc" in dom and "Stages" in dom,
              "run page: verdict, stages and the source")
        check("The first run of this principal" in dom, "the first run has nothing to diff")
        check("· team local · author kiln-tests ·" in dom,
              "run page: the team is the principal (local), the solution's author shown apart")
        dom, img = page("/runs/" + bad, "run_failed", 900)
        check("Why:" in dom and "integrity.unwritten_output" in dom and "REJECTED" in dom,
              "a rejected run says why")
        check(f'Changes since <a href="/runs/{good}">' in dom and '<span class="add">+' in dom
              and '<span class="del">-' in dom,
              "a run shows its source diff against the same principal's previous run")
        check(not re.search(r'REJECTED</span></td><td class="num">[^<]*</td><td class="num">'
                            r'[^<]*</td><td class="num">[0-9.]+x', dom),
              "a rejected workload claims no speedup")
        dom, img = page("/runs?limit=1", "runs", 600)
        rows = dom.count('<a href="/runs/')
        m = re.search(r'<a class="next" href="([^"]+)"', dom)
        check(rows == 1 and m is not None, "runs page: one run a page and a next link")
        if m:
            second = chromium(browser, home, base + m.group(1).replace("&amp;", "&"), "--dump-dom")
            ids = re.findall(r'<a href="/runs/([0-9a-f]+)"', dom + second)
            check(len(set(ids)) == 2, f"the next page holds another run ({ids})")
        # Agents name solutions at length: the runs list still fits a 1400 px window (the
        # names wrap), so the strip right of the content is the page's background alone.
        with open(os.path.join(data, "solutions/correct.json")) as f:
            long_named = json.load(f)
        long_named["name"] = ("scale_add_correct_with_a_very_long_descriptive_name_from_an_agent"
                              "_campaign_v17_autotuned")
        long_path = os.path.join(work, "long_named.json")
        with open(long_path, "w") as f:
            json.dump(long_named, f)
        submit(bin_dir, h.address, None, long_path)
        dom, img = page("/runs", "runs_wide", 600, 1400)
        width, height = img.size
        strip = img.crop((width - 120, 60, width, height))
        foreign = sum(1 for p in strip.getdata()
                      if max(abs(a - b) for a, b in zip(p, (246, 247, 249))) > 6)
        check(long_named["name"] in dom and foreign == 0,
              f"runs page: a 90-character solution name keeps the table inside the window "
              f"({foreign} non-background pixels in the right-hand strip)")
        status, _, body = get(h.port, "/runs/" + good, {"Accept": "application/json"})
        check(status == 200 and len(json.loads(body)["traces"]) == 3, "the run page as JSON")
        # A profile run (kiln profile needs a GPU and Nsight Compute): a run made a profile in
        # the archive, with the figures of the vectorised copy at 1 GiB that kiln profile
        # recorded on an NVIDIA H200 (docs/profiles.md).
        prof = submit(bin_dir, h.address, None, os.path.join(data, "solutions/correct.json"))
        db = sqlite3.connect(os.path.join(work, "open", "kiln.db"), timeout=30)
        db.execute("UPDATE runs SET kind = 'profile', profile_pb = ? WHERE run_id = ?",
                   (copy_profile_pb(), prof))
        db.commit()
        db.close()
        dom, img = page("/runs/" + prof, "run_profile", 1100)
        check("Nsight Compute profile (section basic)" in dom and "copy_vectorised_kernel" in dom
              and "533.06" in dom and "memory_bound_dram" in dom and "82.9" in dom,
              "a profile run's page shows its kernels, figures and direction")
        check(len(set(img.getdata())) > 8, "profile run page: the screenshot is not blank")
    finally:
        h.stop()


def copy_profile_pb():
    """kiln.v1.RunProfile (proto/kiln/v1/types.proto) in protobuf's wire format: one kernel."""
    def varint(n):
        out = b""
        while True:
            byte, n = n & 0x7F, n >> 7
            out += bytes([byte | (0x80 if n else 0)])
            if not n:
                return out

    def text(field, value):
        data = value.encode() if isinstance(value, str) else value
        return varint(field << 3 | 2) + varint(len(data)) + data

    def double(field, value):
        return varint(field << 3 | 1) + struct.pack("<d", value)

    def number(field, value):
        return varint(field << 3) + varint(value)

    kernel = (text(1, "copy_vectorised_kernel(const float4 *, float4 *, long, const float *, "
                      "float *, int)")
              + text(2, "NVIDIA H200") + text(3, "(256, 1, 1)") + text(4, "(4224, 1, 1)")
              + double(5, 533.06) + double(6, 6.0) + double(7, 82.9) + double(8, 82.9)
              + double(11, 91.2) + double(12, 100.0) + text(13, "registers, warps")
              + double(14, 8) + double(15, 4.0) + number(16, 32)
              + text(24, "memory_bound_dram"))
    target = text(1, "solution") + text(2, kernel) + double(4, 3.9) + text(
        5, "profile/solution.ncu-rep")
    return text(1, "basic") + text(4, target)


def controller_checks(bin_dir, data, work, shots):
    """kiln-controller --http-listen: the campaigns page and one campaign's page, rendered."""
    browser = find_chromium()
    if browser is None:
        print("SKIP controller rendering: no chromium on PATH")
        return
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(data))))
    examples = os.path.join(work, "examples")
    shutil.copytree(os.path.join(root, "controller", "examples"), examples)
    yaml_path = os.path.join(examples, "sweep-host.yaml")
    text = open(yaml_path).read().replace("max_candidates: 9", "max_candidates: 3")
    open(yaml_path, "w").write(text)
    h = Harness(bin_dir, work, "campaign-harness", [])
    controller = None
    try:
        controller = Service(bin_dir, work, "controller", "kiln-controller",
                             ["--data-dir", os.path.join(work, "controller"), "--harness",
                              h.address])
        address, console = controller.address, controller.console
        check(console.startswith("http://127.0.0.1:"),
              f"kiln-controller prints its web console's address ({console})")
        port = int(console.rsplit(":", 1)[1])
        r = subprocess.run([os.path.join(bin_dir, "kiln"), "campaign", "start", yaml_path,
                            "--controller", address, "--wait", "--json"],
                           capture_output=True, text=True, timeout=600)
        check(r.returncode == 0, "a 3-candidate sweep campaign completes" +
              ("" if r.returncode == 0 else ": " + r.stderr[-1500:]))
        campaign_id = json.loads(r.stdout)["campaign_id"]
        status, _, body = get(port, "/", {"Accept": "application/json"})
        check(status == 200 and json.loads(body)["campaigns"][0]["campaign_id"] == campaign_id,
              "the campaigns list as JSON")
        status, _, body = get(port, "/campaigns/" + campaign_id, {"Accept": "application/json"})
        detail = json.loads(body)
        check(status == 200 and len(detail.get("rounds", [])) >= 1 and
              len(detail.get("candidates", [])) == 4,
              "a campaign as JSON carries its rounds and its 4 candidates (baseline included)")
        status, _, _ = get(port, "/campaigns/no-such-campaign")
        check(status == 404, f"an unknown campaign: 404 ({status})")
        # The controller serves kiln.v1.Harness for its fleet: its console lists the runs the
        # campaign made on the harness (the baseline and 3 candidates), and shows one of them.
        status, _, body = get(port, "/runs", {"Accept": "application/json"})
        fleet_runs = json.loads(body).get("runs", []) if status == 200 else []
        check(len(fleet_runs) >= 4, f"the controller's console lists the fleet's runs ({status}, "
              f"{len(fleet_runs)} runs)")
        if fleet_runs:
            status, _, body = get(port, "/runs/" + fleet_runs[0]["run_id"],
                                  {"Accept": "application/json"})
            check(status == 200 and json.loads(body).get("run_id") == fleet_runs[0]["run_id"],
                  "the controller's console shows a run of the fleet")
        home = os.path.join(work, "chromium-controller")
        os.makedirs(home)
        dom = chromium(browser, home, console + "/", "--dump-dom")
        check(f'href="/campaigns/{campaign_id}"' in dom, "the campaigns page links the campaign")
        url = console + "/campaigns/" + campaign_id
        dom = chromium(browser, home, url, "--dump-dom")
        png = os.path.join(shots, "campaign.png")
        chromium(browser, home, url, "--window-size=1200,1600", f"--screenshot={png}")
        img = Image.open(png).convert("RGB")
        m = re.search(r'<polyline class="best" points="([^"]+)"', dom)
        check(m is not None and len(m.group(1).split()) >= 2,
              "campaign page: the best-latency line is drawn")
        check(len(re.findall(r'<rect class="used"', dom)) >= 3,
              "campaign page: the budget bars (candidates, rounds, wall clock, GPU s)")
        check('class="PASSED"' in dom and "Candidates" in dom and "Rounds" in dom,
              "campaign page: rounds and candidates' verdicts")
        check(colour_pixels(img, CANDIDATE) > 500, "campaign page: the charts are seen in pixels")
    finally:
        if controller is not None:
            controller.stop()
        h.stop()


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    bin_dir, data = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="kiln-web-console-") as work:
        shots = sys.argv[3] if len(sys.argv) > 3 else os.path.join(work, "shots")
        os.makedirs(shots, exist_ok=True)
        access_checks(bin_dir, data, work)
        exposure_checks(bin_dir, work)
        tls_checks(bin_dir, work)
        rendering_checks(bin_dir, data, work, shots)
        controller_checks(bin_dir, data, work, shots)
        if failures:
            for name in ("secured.log", "tls.log", "mtls.log", "open.log",
                         "campaign-harness.log", "controller.log"):
                path = os.path.join(work, name)
                if os.path.exists(path):
                    print(f"--- {name}\n" + open(path).read()[-3000:])
    print(f"{len(failures)} failed" if failures else "all web console checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
