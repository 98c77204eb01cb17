// qdlab's visualizer in the browser: one handler, set as the onclick / onmouseover / oninput attribute of the graph
// and code panes (and as the onerror of a hidden image each render adds, which runs it once the pane is drawn).
// `this` is the element carrying the attribute, `event` the DOM event. No kernel round trip is needed for anything
// here: zoom, expanding an edit graph, hover and click highlighting of source lines and code rows, the assembly
// filter, search and copy. Choosing a construct goes through the widget's own <select>, so the kernel side sees an
// ordinary selection.
var root = this.closest(".qdlab-split-visualizer") || this;
var target = event.target;

function rows(line) {
    return root.querySelectorAll("[data-src='" + line + "']");
}

function mark(line, cls) {
    var old = root.querySelectorAll("." + cls);
    for (var k = 0; k < old.length; k++) old[k].classList.remove(cls);
    if (!line) return [];
    var hit = rows(line);
    for (var k = 0; k < hit.length; k++) hit[k].classList.add(cls);
    return hit;
}

function reveal(el) {
    // Scroll `el` into view inside its own scrolling pane only (never the notebook).
    var pane = el.closest(".qd-scroll");
    if (!pane) return;
    var a = el.getBoundingClientRect(), b = pane.getBoundingClientRect();
    // a third of the way down, or less for a tall element: its top is never cut off
    var above = Math.min(b.height / 3, Math.max(4, (b.height - a.height) / 2));
    if (a.top < b.top || a.bottom > b.bottom) pane.scrollTop += a.top - b.top - above;
    if (a.left < b.left || a.right > b.right) pane.scrollLeft += a.left - b.left - 20;
}

function zoom(box, factor) {
    var svg = box.querySelector(".qd-graph-view > div:not([hidden]) svg") || box.querySelector("svg");
    if (!svg) return;
    // zoom 1: as wide as the view, between data-least and data-natural (render.fit); else a
    // multiple of the width it has now, panned by scrolling the view.
    var z = factor ? (parseFloat(svg.getAttribute("data-zoom")) || 1) * factor : 1;
    var now = svg.getBoundingClientRect().width;
    svg.setAttribute("data-zoom", z);
    svg.style.width = z === 1 ? "100%" : now * factor + "px";
    svg.style.maxWidth = z === 1 ? svg.getAttribute("data-natural") : "none";
    svg.style.minWidth = z === 1 ? svg.getAttribute("data-least") : "0";
}

function select(index) {
    var picker = root.querySelector("select");
    if (!picker) return;
    for (var k = 0; k < picker.options.length; k++) {
        // ipywidgets writes the option labels with non-breaking spaces.
        if (picker.options[k].textContent.replace(/\s/g, " ").indexOf("construct " + index + " ") === 0) {
            picker.selectedIndex = k;
            picker.dispatchEvent(new Event("change", { bubbles: true }));
            return;
        }
    }
}

if (event.type === "error") {
    // A render finished: bring the selected construct's cluster and its first own line into view.
    var id = target.getAttribute("data-cluster");
    var chosen = id && root.querySelector("g[id='" + id + "']");
    if (chosen) reveal(chosen);
    var own = root.querySelector(".qd-source .qd-own");
    if (own) reveal(own);
    return;
}

if (event.type === "mouseover") {
    var hovered = target.closest("[data-src]");
    mark(hovered && hovered.getAttribute("data-src"), "qd-hot");
    return;
}

if (event.type === "input") {
    var box = target.closest(".qd-listing");
    var needle = target.value.toLowerCase();
    var lines = box.querySelectorAll(".qd-row");
    var first = null;
    for (var k = 0; k < lines.length; k++) {
        var found = needle && lines[k].textContent.toLowerCase().indexOf(needle) >= 0;
        lines[k].classList.toggle("qd-found", !!found);
        if (found && !first && lines[k].offsetParent) first = lines[k];
    }
    if (first) reveal(first);
    return;
}

var act = target.closest("[data-act]");
if (act) {
    var what = act.getAttribute("data-act");
    var graph = act.closest(".qdlab-graph");
    var listing = act.closest(".qd-listing");
    if (what === "zoom-in") zoom(graph, 1.25);
    else if (what === "zoom-out") zoom(graph, 0.8);
    else if (what === "fit") zoom(graph, 0);
    else if (what === "all") {
        listing.classList.toggle("qd-all");
        act.textContent = listing.classList.contains("qd-all") ? "filtered" : "show all";
    } else if (what === "copy") {
        var shown = listing.querySelectorAll(listing.classList.contains("qd-all") ? ".qd-full .qd-row" : ".qd-filtered .qd-row");
        var text = Array.prototype.map.call(shown, function (r) { return r.textContent; }).join("\n");
        if (navigator.clipboard) navigator.clipboard.writeText(text);
        act.textContent = "copied";
    }
    return;
}

var expand = target.closest("g.node");
if (expand && /^qd_expand/.test(expand.id)) {
    var views = expand.closest(".qdlab-graph").querySelectorAll(".qd-graph-view > div");
    for (var k = 0; k < views.length; k++) views[k].toggleAttribute("hidden");
    return;
}

var cluster = target.closest("g.cluster");
var title = cluster && cluster.querySelector("title");
var match = title && /^cluster_c(\d+)$/.exec(title.textContent);
var node = target.closest("g.node");
match = match || (node && /^qd_c(\d+)_s\d+$/.exec(node.id));
if (match && root.classList.contains("qdlab-split-visualizer")) {
    event.preventDefault();
    select(match[1]);
    return;
}

var line = target.closest("[data-src]");
if (line) {
    // Pin: mark the line everywhere and bring its first row in each pane into view.
    var hit = mark(line.getAttribute("data-src"), "qd-pinned");
    var seen = [];
    for (var k = 0; k < hit.length; k++) {
        var pane = hit[k].closest(".qd-scroll");
        if (pane && seen.indexOf(pane) < 0 && hit[k] !== line) {
            seen.push(pane);
            reveal(hit[k]);
        }
    }
}
