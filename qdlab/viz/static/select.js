// Runs as the graph container's onclick: a click on a construct's cluster, or on a statement drawn inside it,
// selects that construct in the visualizer's dropdown through the select element's own change event, so the
// kernel side sees an ordinary selection.
var cluster = event.target.closest("g.cluster");
var title = cluster && cluster.querySelector("title");
var match = title && /^cluster_c(\d+)$/.exec(title.textContent);
var node = event.target.closest("g.node");
match = match || (node && /^qd_c(\d+)_s\d+$/.exec(node.id));
var root = this.closest(".qdlab-split-visualizer");
var select = root && root.querySelector("select");
if (!match || !select) return;
event.preventDefault();
for (var k = 0; k < select.options.length; k++) {
    // ipywidgets writes the option labels with non-breaking spaces.
    if (select.options[k].textContent.replace(/\s/g, " ").indexOf("construct " + match[1] + " ") === 0) {
        select.selectedIndex = k;
        select.dispatchEvent(new Event("change", { bubbles: true }));
        return;
    }
}
