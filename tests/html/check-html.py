#!/usr/bin/env python3
"""The HTML page (-f html) and the job summary (-f markdown) in a real browser (issue 26).

For the bundled example, the hostile-names fixture and a two-input run, in headless Chromium:
- the page needs nothing from the network and its CSP allows exactly its one <style> and one
  <script> (their sha256 recomputed here); Chromium logs no console message at all (a CSP
  violation, an uncaught exception);
- collapsed modules' bodies, chunks of rows or modules past 200, and the traces' distinct
  lists are inert <script type="text/html"> blocks (issue 36) holding no '<!--', '<script' or
  '</script' that could end them early; the page's script renders each when its <details>
  opens: with every one opened (a probe script, added to the CSP by its hash, opens them
  until none is left), no module or chunk block is left, every tensor row is there and every
  trace shows its steps;
- every finding of `-f json` is in the DOM (rule, message) and every link to a tensor, trace,
  group or module lands on an element of the fully opened DOM;
- hostile names are text: no element, attribute or link comes from a name, and the names
  are shown (controls as \\xNN);
- opening the page at a tensor's anchor renders and opens the modules around it, even when
  they are nested blocks (the inline script);
- the Markdown summary rendered as GitHub does (cmark-gfm with tables and raw HTML, when
  installed) has no element or link from a name and the same cells in every table row.
Screenshots go to the build directory (check-html-*.png). Without Chromium the test is
skipped (exit 77) and says so.
Usage: check-html.py DTYPELINT SOURCE_ROOT OUTDIR
"""
import base64, hashlib, html.parser, json, os, re, shutil, subprocess, sys, tempfile

dtypelint, root, outdir = (os.path.abspath(a) for a in sys.argv[1:4])
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    print("SKIP: chromium is not installed (Debian: apt-get install chromium)")
    sys.exit(77)
failures = []
EXAMPLE = "fixtures/examples/qwen2-lora-zero3.yaml"
HOSTILE = "fixtures/cli/formats/hostile-names.yaml"


def fail(msg):
    failures.append(msg)


class Dom(html.parser.HTMLParser):
    """Elements (tag, attrs), ids, the text of each id'd element's subtree, all text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements, self.ids, self.text = [], {}, []
        self.stack = []  # open elements: [tag, id, text pieces, attrs]
        self.ancestors = {}  # id -> the <details> around it: [(id, open)]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if "id" in a:
            self.ids[a["id"]] = (tag, a)
            self.ancestors[a["id"]] = [(e[1], "open" in e[3]) for e in self.stack
                                       if e[0] == "details"]
        if tag not in ("meta", "br", "img", "input", "link", "hr", "col"):
            self.stack.append([tag, a.get("id"), [], a])

    def handle_endtag(self, tag):
        while self.stack:
            t, i, pieces, _ = self.stack.pop()
            if i:
                self.ids[i] = self.ids[i] + ("".join(pieces),)
            if self.stack:
                self.stack[-1][2].extend(pieces)
            if t == tag:
                break

    def handle_data(self, data):
        self.text.append(data)
        if self.stack:
            self.stack[-1][2].append(data)


def parse(text):
    d = Dom()
    d.feed(text)
    d.close()
    return d


def browse(page, name, fragment="", screenshot=True):
    """Loads page in Chromium: its DOM after the scripts, the console lines, a screenshot."""
    with tempfile.TemporaryDirectory() as profile:
        common = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                  "--window-size=1280,1600", "--virtual-time-budget=30000"]
        url = "file://" + page + fragment
        dom = subprocess.run(common + ["--dump-dom", url], capture_output=True, timeout=120)
        shot = os.path.join(outdir, f"check-html-{name}.png")
        if os.path.exists(shot):
            os.remove(shot)
        log = dom.stderr
        if screenshot:
            log += subprocess.run(common + [f"--screenshot={shot}", url], capture_output=True,
                                  timeout=120).stderr
    console = [l for l in log.decode("utf-8", "replace").splitlines()
               if "CONSOLE" in l or "Uncaught" in l or "Refused" in l
               or "Content Security Policy" in l]
    for l in console:
        fail(f"{name}: console: {l[:300]}")
    if dom.returncode != 0:
        fail(f"{name}: chromium --dump-dom exit {dom.returncode}")
    if screenshot and (not os.path.exists(shot) or os.path.getsize(shot) < 10000):
        fail(f"{name}: no screenshot (or a blank one) at {shot}")
    return dom.stdout.decode("utf-8", "replace")


# Opens every <details> (modules, chunks, traces), again and again (a module's body brings its
# children), then marks <body> with the number of rounds; the page's own script renders each
# body on "toggle".
PROBE = ("addEventListener('load',function(){var n=0;function go(){"
         "var c=document.querySelectorAll('details:not([open])');"
         "if(!c.length){document.body.setAttribute('data-rounds',n);return;}"
         "n++;for(var i=0;i<c.length;i++)c[i].open=true;setTimeout(go,0);}go();});")


def with_probe(text, probe=PROBE):
    """The page with a second script, allowed by its hash beside the page's own."""
    digest = base64.b64encode(hashlib.sha256(probe.encode()).digest()).decode()
    text = text.replace("script-src '", f"script-src 'sha256-{digest}' '", 1)
    return text.replace("</head>", f"<script>{probe}</script>\n</head>", 1)


def expanded(name, text, tmp):
    """The DOM with every module opened by the page's script."""
    page = os.path.join(tmp, name + "-open.html")
    with open(page, "w") as f:
        f.write(with_probe(text))
    dom = browse(page, name + "-open", screenshot=False)
    if not re.search(r'<body[^>]* data-rounds="\d+"', dom):
        fail(f"{name}: the probe did not finish opening the modules")
    if re.search(r'<script type="text/html" id="b[mx]', dom):
        fail(f"{name}: a module's body is left unrendered with every module open")
    return dom


def shown(s):
    """A name as the reporters show it: C0, DEL and C1 controls as \\xNN / \\u00NN."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7f else
                   f"\\u{ord(c):04x}" if 0x80 <= ord(c) <= 0x9f else c for c in s)


def lint(fmt, *files):
    r = subprocess.run([dtypelint, "-q", "-f", fmt, *files], cwd=root, capture_output=True)
    if r.returncode not in (0, 1):
        fail(f"-f {fmt} {files}: exit {r.returncode}: {r.stderr[:300]!r}")
    return r.stdout.decode("utf-8")


def static_checks(name, text):
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', text)
    if not csp:
        return fail(f"{name}: no CSP <meta>")
    policy = dict((d.split(" ", 1) + [""])[:2] for d in csp.group(1).split("; "))
    if policy.get("default-src") != "'none'":
        fail(f"{name}: CSP default-src is not 'none': {csp.group(1)}")
    for tag, directive in (("style", "style-src"), ("script", "script-src")):
        bodies = re.findall(rf"<{tag}>(.*?)</{tag}>", text, re.S)
        if len(bodies) != 1:
            fail(f"{name}: {len(bodies)} <{tag}> elements, want 1")
            continue
        digest = base64.b64encode(hashlib.sha256(bodies[0].encode()).digest()).decode()
        if policy.get(directive) != f"'sha256-{digest}'":
            fail(f"{name}: {directive} is {policy.get(directive)!r}, the {tag} hashes to "
                 f"sha256-{digest}")
    blocks = re.findall(r'<script type="text/html" id="b[mxq]\d+-\d+">(.*?)</script>', text, re.S)
    if text.count("<script") != 1 + len(blocks):
        fail(f"{name}: a <script> other than the page's and its module bodies")
    for b in blocks:
        if re.search(r"<!--|<script|</script", b, re.I):
            fail(f"{name}: a module body could end its block early: {b[:200]!r}")
    style = "".join(re.findall(r"<style>(.*?)</style>", text, re.S))
    for needle in ("url(", "@import"):
        if needle in style:
            fail(f"{name}: {needle!r} in the style: it would load something")
    for tag, attrs in parse(text).elements:
        if tag in ("link", "img", "iframe", "object", "embed", "base") or "src" in attrs or \
                attrs.get("http-equiv") == "refresh":
            fail(f"{name}: <{tag} {attrs}> in the page: it would load something")


def dom_checks(name, dom, findings):
    d = parse(dom)
    scripts = [e for e in d.elements if e[0] == "script" and e[1].get("type") != "text/html"]
    if len(scripts) != 2:  # the page's and the probe
        fail(f"{name}: {len(scripts)} <script> elements in the DOM, want 2")
    for tag, attrs in d.elements:
        if tag in ("img", "iframe", "object", "embed", "svg", "form", "input"):
            fail(f"{name}: a <{tag}> element in the DOM")
        for k, v in attrs.items():
            if k.startswith("on"):
                fail(f"{name}: an {k} attribute on <{tag}>")
            if k == "href" and not (v or "").startswith("#"):
                fail(f"{name}: a link out of the page: {v!r}")
            if k == "href" and (v or "#")[1:] not in d.ids:
                fail(f"{name}: a link to #{v[1:]}, which is not in the DOM")
    for i, e in d.ids.items():  # each trace's steps, from the shared lists
        steps = re.match(r"(\d+) steps?", e[2] if len(e) > 2 else "")
        if i.startswith("tr") and (not steps or e[2].count("\u2192") < int(steps.group(1))):
            fail(f"{name}: trace {i} opened reads {e[2][:100]!r}")
    boxes = {i: e for i, e in d.ids.items() if "finding" in (e[1].get("class") or "")}
    if len(boxes) != len(findings):
        fail(f"{name}: {len(boxes)} findings in the DOM, {len(findings)} in -f json")
    for k, f in enumerate(findings):
        box = d.ids.get(f"f{k}")
        if not box or len(box) < 3:
            fail(f"{name}: finding {k} ({f['rule']}) is not in the DOM")
            continue
        for want in (f["rule"], shown(f["message"])):
            if want not in box[2]:
                fail(f"{name}: finding {k} lacks {want[:80]!r}")
        for t in f["tensors"]:
            if shown(t) not in box[2]:
                fail(f"{name}: finding {k} does not name tensor {t[:80]!r}")
    return d


os.makedirs(outdir, exist_ok=True)
with tempfile.TemporaryDirectory() as tmp:
    # ten FSDP1 units: 0-3 and 5-9 alike, 4 mixed (a finding): two runs and one layer drawn
    repeats = os.path.join(tmp, "repeats.yaml")
    with open(repeats, "w") as f:
        f.write("dtypelint: 1\nmodel: {checkpoint_dtype: bfloat16}\ntensors:\n")
        for i in range(10):
            f.write(f"  - {{name: model.layers.{i}.attn.q_proj.weight, shape: [8, 8]}}\n"
                    f"  - {{name: model.layers.{i}.norm.weight, shape: [8]"
                    f"{', dtype: float32' if i == 4 else ''}}}\n")
        f.write('training: {strategy: fsdp1, versions: {torch: "2.4.1"}, '
                'fsdp: {wrap: ["model.layers.*"]}}\n')
    # past ROWS (200): a module of 450 tensors and one of 450 children, both FSDP1 units
    # mixing dtypes (errors) at tensor 351 and child 301, which are shown: the rest goes into
    # chunks drawn when opened
    wide = os.path.join(tmp, "wide.yaml")
    with open(wide, "w") as f:
        f.write("dtypelint: 1\nmodel: {checkpoint_dtype: bfloat16}\ntensors:\n")
        for i in range(450):
            f.write(f"  - {{name: big.p{i}, shape: [{i + 1}]"
                    f"{', dtype: float32' if i == 350 else ''}}}\n"
                    f"  - {{name: h.{i}.a.weight, shape: [{i + 1}]"
                    f"{', dtype: float32' if i == 300 else ''}}}\n"
                    f"  - {{name: h.{i}.b.weight, shape: [{i + 2}]}}\n")
        f.write('training: {strategy: fsdp1, versions: {torch: "2.4.1"}, '
                'fsdp: {wrap: ["h.*", big]}}\n')
    cases = {"example": [EXAMPLE], "hostile": [HOSTILE], "repeats": [repeats], "wide": [wide],
             "two-inputs": ["fixtures/rules/dt101-fires.yaml", "fixtures/cli/suppress/listed.yaml"]}
    doms = {}
    for name, files in cases.items():
        page = os.path.join(tmp, name + ".html")
        text = lint("html", *files)
        with open(page, "w") as f:
            f.write(text)
        static_checks(name, text)
        findings = json.loads(lint("json", *files))["findings"]
        if not findings:
            fail(f"{name}: no findings: the case tests nothing")
        browse(page, name, screenshot=name == "example" or name == "hostile")
        doms[name] = dom_checks(name, expanded(name, text, tmp), findings)

    # repeated layers: drawn once each run, with the count; the mixed one on its own
    text = "".join(doms["repeats"].text)
    for run in ("\u00d74 identical: 0 \u2026 3", "\u00d75 identical: 5 \u2026 9"):
        if run not in text:
            fail(f"repeats: no {run!r}")
    rows = [i for i, e in doms["repeats"].ids.items() if e[0] == "tr" and i.startswith("t0-")]
    if len(rows) != 6:
        fail(f"repeats: {len(rows)} tensor rows, want 6 (two runs drawn once, layer 4)")

    # every row and module of the wide model once, the chunks saying which ones they hold
    wide_ids = doms["wide"].ids
    rows = [i for i, e in wide_ids.items() if e[0] == "tr" and i.startswith("t0-")]
    if len(rows) != 1350:
        fail(f"wide: {len(rows)} tensor rows with every module open, want 1350")
    text = "".join(doms["wide"].text)
    for chunk in ("tensors 201\u2013400 of 450", "tensors 401\u2013450 of 450",
                  "modules 201\u2013300 of 450", "modules 302\u2013450 of 450"):
        if chunk not in text:
            fail(f"wide: no chunk {chunk!r}")
    raw = browse(os.path.join(tmp, "wide.html"), "wide-closed", screenshot=False)
    tree = raw.split("Modules</h3>")[-1].split('<script type="text/html"')[0]  # no blocks
    tables = [t.count("<tr") - 1 for t in re.findall(r"<table>.*?</table>", tree, re.S)]
    if not tables or max(tables) > 200:
        fail(f"wide: tables of {tables} rows drawn before anything is opened, want <= 200")
    closed = parse(tree)
    text = "".join(closed.text)
    for shown_ in ("p350", "tensors 201\u2013400 of 450", "modules 302\u2013450 of 450"):
        if shown_ not in text:
            fail(f"wide: {shown_!r} is not shown before anything is opened")
    if "p400" in text:
        fail("wide: tensor p400 is drawn before its chunk is opened")

    # hostile names are shown as text, every piece of them
    names = [n for n in json.loads(lint("json", HOSTILE))["findings"][0]["tensors"]]
    text = "".join(doms["hostile"].text)
    segments = ["<script>alert(1)</script>", "](javascript:alert(2))|`code`|_em_$m$~s~",
                "line\\x0abreak\\x1b[31m\\u0085&amp;'\"@x\\", "<img src=x onerror=alert(3)>",
                "[link](https://example", "invalid/)<!--"]
    for s in segments:
        if s not in text:
            fail(f"hostile: {s!r} is not text of the DOM")
    if len(names) < 2:
        fail("hostile: the fixture's finding names fewer than 2 tensors")

    # the inline script renders and opens the modules around a tensor named in the address:
    # one whose row is in a block, and one whose row is in a block inside a block
    example = doms["example"]
    closed = parse(browse(os.path.join(tmp, "example.html"), "example-closed",
                          screenshot=False))
    lazy = [i for i in example.ids if i.startswith("t0-") and i not in closed.ids]
    deep = [i for i in lazy if sum(1 for m, _ in example.ancestors[i]
                                   if m.startswith("m") and m not in closed.ids) >= 2]
    if not lazy or not deep:
        fail(f"example: {len(lazy)} tensor rows rendered when opened, {len(deep)} two blocks "
             "deep: want both")
    for target in (lazy[:1] + deep[:1]):
        dom = parse(browse(os.path.join(tmp, "example.html"), "example-anchor", "#" + target,
                           screenshot=False))
        shut = [m for m, o in dom.ancestors.get(target, [(None, False)]) if not o]
        if target not in dom.ids or shut:
            fail(f"example: #{target} in the address: in the DOM {target in dom.ids}, "
                 f"left closed {shut}")

    # the Markdown summary as GitHub renders it
    cmark = shutil.which("cmark-gfm")
    if not cmark:
        print("note: cmark-gfm is not installed: the Markdown rendering is not checked")
    else:
        for name, files in (("md-hostile", [HOSTILE]), ("md-example", [EXAMPLE])):
            md = lint("markdown", *files)
            body = subprocess.run([cmark, "--unsafe", "-e", "table"], input=md.encode(),
                                  capture_output=True, check=True).stdout.decode()
            page = os.path.join(tmp, name + ".html")
            with open(page, "w") as f:
                f.write("<!DOCTYPE html><html><head><meta charset=utf-8></head><body>" + body +
                        "</body></html>")
            d = parse(browse(page, name, screenshot=name == "md-example"))
            allowed = {"html", "head", "body", "meta", "h2", "h3", "p", "code", "strong",
                       "blockquote", "table", "thead", "tbody", "tr", "th", "td", "ul", "li"}
            for tag, attrs in d.elements:
                if tag not in allowed:
                    fail(f"{name}: a <{tag}> element from the summary: {attrs}")
                for k in attrs:
                    if k.startswith("on"):
                        fail(f"{name}: an {k} attribute")
            # every row of a table has its header's cells: no '|' from a name splits one
            width = None
            for line in md.splitlines():
                if not line.startswith("|"):
                    width = None
                    continue
                bars = sum(1 for t in re.findall(r"\\.|\|", line) if t == "|")
                if width is None:
                    width = bars
                elif bars != width:
                    fail(f"{name}: a row with {bars - 1} cells, its header {width - 1}: "
                         f"{line[:100]!r}")
            text = "".join(d.text)
            if name == "md-hostile":
                for s in segments[:2]:
                    if s not in text:
                        fail(f"{name}: {s!r} is not text of the rendered summary")
for f in failures[:30]:
    print("FAIL:", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
