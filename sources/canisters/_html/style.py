"""The style sheet of every page (part of :mod:`canisters.html`).

Every rule is scoped under ``.canisters-view`` so that a notebook's own styles
and the page's do not mix. Messages are laid out lazily by the browser, in
chunks of a few dozen (``content-visibility: auto``): a page of ten thousand
messages opens and scrolls without laying out what is far from the window.
"""

from __future__ import annotations

from typing import Final

CSS: Final = """
.canisters-view{--user:#1f7a3a;--assistant:#1d5fb8;--supervisor:#8a2d9c;
--document:#0e7c86;--invocation:#a86500;--result:#7a5a00;--error:#b3261e;
--muted:#5f6368;--line:#dadce0;--bg:#ffffff;--fg:#1f1f1f;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:var(--fg);background:var(--bg);max-width:980px;margin:0 auto;padding:12px}
.canisters-view *{box-sizing:border-box}
.canisters-view h1{font-size:20px;margin:4px 0 6px;overflow-wrap:anywhere}
.canisters-view .cv-summary{color:var(--muted);margin:0 0 8px}
.canisters-view .cv-summary b{color:var(--fg);font-weight:600}
.canisters-view .cv-panel{border:1px solid var(--line);border-radius:6px;
padding:6px 10px;margin:6px 0}
.canisters-view .cv-ok{border-color:#1f7a3a;color:#1f7a3a}
.canisters-view .cv-bad{border-color:var(--error);color:var(--error)}
.canisters-view .cv-step{border-left:3px solid var(--line);margin:14px 0;
padding-left:10px}
.canisters-view .cv-step-head{font-size:12px;font-weight:600;color:var(--muted);
text-transform:uppercase;letter-spacing:.05em;margin:0 0 4px}
.canisters-view .cv-msg{border:1px solid var(--line);border-left:5px solid var(--c);
border-radius:6px;margin:6px 0;padding:6px 10px;background:var(--tint);
overflow-wrap:anywhere}
.canisters-view .cv-chunk{content-visibility:auto;contain-intrinsic-size:auto 4000px}
.canisters-view .cv-user{--c:var(--user);--tint:#f3faf4;margin-left:48px}
.canisters-view .cv-assistant{--c:var(--assistant);--tint:#f4f8fe;margin-right:48px}
.canisters-view .cv-supervisor{--c:var(--supervisor);--tint:#faf4fb}
.canisters-view .cv-document{--c:var(--document);--tint:#f2fafa}
.canisters-view .cv-invocation{--c:var(--invocation);--tint:#fff8ec;margin:0}
.canisters-view .cv-result{--c:var(--result);--tint:#fffcf2;margin:0}
.canisters-view .cv-result.cv-error{--c:var(--error);--tint:#fdf1f0}
.canisters-view .cv-other{--c:var(--muted);--tint:#f6f6f6}
.canisters-view .cv-head{display:flex;flex-wrap:wrap;gap:4px 10px;
align-items:baseline;font-size:12px;color:var(--muted)}
.canisters-view .cv-role{font-weight:700;color:var(--c);text-transform:uppercase;
letter-spacing:.04em}
.canisters-view .cv-tag{border:1px solid currentColor;border-radius:9px;
padding:0 6px;font-size:11px}
.canisters-view .cv-tag-error{color:var(--error);font-weight:700}
.canisters-view .cv-tag-pending{color:var(--error)}
.canisters-view .cv-text{white-space:pre-wrap;margin:4px 0}
.canisters-view .cv-code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;
white-space:pre-wrap;background:#f6f8fa;border-radius:4px;padding:4px 6px;margin:4px 0}
.canisters-view .cv-pair{display:grid;grid-template-columns:1fr 1fr;gap:8px;
margin:6px 0}
.canisters-view .cv-pending{border:1px dashed var(--error);border-radius:6px;
color:var(--error);padding:6px 10px}
.canisters-view details>summary{cursor:pointer;color:var(--muted);font-size:12px}
.canisters-view details.cv-reasoning{border:1px dashed #9aa0a6;border-radius:6px;
padding:2px 8px;margin:4px 0;background:#fafafa}
.canisters-view details.cv-reasoning[open]>summary{margin-bottom:4px}
.canisters-view details.cv-provided{border:1px solid #9aa0a6;border-radius:6px;
padding:4px 8px;margin:4px 0}
.canisters-view ol.cv-sources{margin:4px 0;padding-left:22px;font-size:13px}
.canisters-view .cv-quote{color:var(--muted)}
.canisters-view details.cv-envelope{font-size:12px}
.canisters-view details.cv-envelope dl{display:grid;grid-template-columns:
max-content 1fr;gap:2px 10px;margin:4px 0}
.canisters-view details.cv-envelope dt{color:var(--muted)}
.canisters-view details.cv-envelope dd{margin:0;font-family:ui-monospace,monospace;
white-space:pre-wrap}
.canisters-view figure{margin:6px 0}
.canisters-view figure img,.canisters-view figure video{max-width:100%;
max-height:480px;border-radius:4px;display:block}
.canisters-view figure img{min-width:96px;height:auto}
.canisters-view figcaption,.canisters-view .cv-card{font-size:12px;color:var(--muted)}
.canisters-view .cv-card{border:1px solid var(--line);border-radius:6px;
padding:6px 10px;background:#fff;display:inline-block;margin:4px 0}
.canisters-view .cv-card b{color:var(--fg)}
.canisters-view .cv-note{font-size:12px;color:var(--muted);font-style:italic}
.canisters-view .cv-usage{font-size:12px;color:var(--muted)}
.canisters-view nav a,.canisters-view a{color:#1a56b8}
.canisters-view table{border-collapse:collapse;width:100%}
.canisters-view th,.canisters-view td{text-align:left;padding:4px 8px;
border-bottom:1px solid var(--line);font-size:13px}
.canisters-view td.cv-id{font-family:ui-monospace,monospace}
@media (max-width:700px){.canisters-view .cv-pair{grid-template-columns:1fr}
.canisters-view .cv-user{margin-left:0}.canisters-view .cv-assistant{margin-right:0}}
"""
"""Rules for every element the pages use."""

PAGE_CSS: Final = "body{margin:0;background:#ffffff}"
"""Rules for a whole page's body (not used in notebook fragments)."""
