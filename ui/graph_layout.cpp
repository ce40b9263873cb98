#include "ui/graph_layout.h"

#include <dlfcn.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <graphviz/gvplugin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

#include "ui/graph_bands.h"

namespace tessel::ui {

namespace {

// Graphviz keeps global state (attribute dictionaries, error buffers, the
// plugin registry): one caller at a time.
std::mutex& graphvizMutex() {
  static std::mutex m;
  return m;
}

// cgraph takes `char*` for strings it only reads.
char* cs(const char* s) {
  return const_cast<char*>(s);
}
char* cs(const std::string& s) {
  return const_cast<char*>(s.c_str());
}

// The context with the dot layout and the core renderers (svg) loaded
// explicitly from their plugin libraries, next to libgvc: no dependency on
// the plugin configuration file (config6a, written by `dot -c`), which a
// fresh machine may lack, and no pango text layout (faster, deterministic).
// Falls back to the configured plugins if the libraries are not found.
// Call with the mutex held.
GVC_t* context() {
  static GVC_t* gvc = nullptr;
  if (gvc) return gvc;
  std::vector<std::string> dirs;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&gvContext), &info) && info.dli_fname) {
    std::string lib = info.dli_fname;
    dirs.push_back(lib.substr(0, lib.rfind('/') + 1) + "graphviz/");
  }
  dirs.push_back("/usr/lib/x86_64-linux-gnu/graphviz/");
  dirs.push_back("/usr/lib/graphviz/");
  std::vector<gvplugin_library_t*> libraries;
  for (const char* plugin : {"dot_layout", "core"}) {
    for (const std::string& dir : dirs) {
      void* handle = dlopen((dir + "libgvplugin_" + plugin + ".so.6").c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) continue;
      std::string symbol = std::string("gvplugin_") + plugin + "_LTX_library";
      if (auto* library = static_cast<gvplugin_library_t*>(dlsym(handle, symbol.c_str()))) {
        libraries.push_back(library);
        break;
      }
    }
  }
  if (libraries.size() == 2) {
    static lt_symlist_t noBuiltins[] = {{nullptr, nullptr}};
    gvc = gvContextPlugins(noBuiltins, 0);
    for (gvplugin_library_t* library : libraries)
      gvAddLibrary(gvc, library);
  } else {
    gvc = gvContext();
  }
  if (!gvc) throw std::runtime_error("Graphviz: cannot create a context");
  // Messages are read with aglasterr() instead of printed.
  agseterr(AGMAX);
  return gvc;
}

std::string lastError() {
  const char* e = aglasterr();
  std::string s = e ? e : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

// Attribute values are not DOT-parsed, but labels interpret backslash escapes.
std::string escapeLabel(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Node size from its two label lines (op, shape), in points: about 6.5 pt a
// character at the 10 px font the view draws with.
std::pair<double, double> nodeSize(const std::string& op, const std::string& shape) {
  size_t chars = std::max(op.size(), shape.size());
  return {std::max(54.0, 6.5 * double(chars) + 16.0), 32.0};
}

// A collapsed partition's box: its task's name over "N ops", as ClusterItem draws them.
std::pair<double, double> partitionBoxSize(const std::string& taskName) {
  return {std::max(72.0, 6.5 * double(taskName.size()) + 20.0), 36.0};
}

// (snprintf: GCC 12 warns wrongly on "n" + std::to_string(i).)
std::string numbered(const char* prefix, size_t i) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%zu", prefix, i);
  return buf;
}

std::string inches(double points) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", points / 72.0);
  return buf;
}

// Object IDs numbered in creation order. cgraph's default discipline uses
// the address of the interned name as a named object's ID, and dot orders
// some of its work by ID: the layout then changed from run to run (ASLR).
struct IdState {
  std::map<std::string, IDTYPE> ids;
  std::map<IDTYPE, std::string> names;
  IDTYPE nextNamed = 2, nextAnonymous = 1;  // even: named; odd: anonymous (as cgraph does)
};
void* idOpen(Agraph_t*, Agdisc_t*) {
  return new IdState;
}
long idMap(void* state, int, char* str, IDTYPE* id, int createflag) {
  auto* s = static_cast<IdState*>(state);
  if (!str) {
    *id = s->nextAnonymous;
    s->nextAnonymous += 2;
    return 1;
  }
  if (auto it = s->ids.find(str); it != s->ids.end()) {
    *id = it->second;
    return 1;
  }
  if (!createflag) return 0;
  *id = s->nextNamed;
  s->nextNamed += 2;
  s->ids.emplace(str, *id);
  s->names.emplace(*id, str);
  return 1;
}
long idAlloc(void*, int, IDTYPE) {
  return 0;
}  // no IDs on request
void idFree(void*, int, IDTYPE) {}
char* idPrint(void* state, int, IDTYPE id) {
  auto* s = static_cast<IdState*>(state);
  auto it = s->names.find(id);
  return it == s->names.end() ? nullptr : const_cast<char*>(it->second.c_str());
}
void idClose(void* state) {
  delete static_cast<IdState*>(state);
}
void idRegister(void*, int, void*) {}
Agiddisc_t kIdDisc = {idOpen, idMap, idAlloc, idFree, idPrint, idClose, idRegister};
Agdisc_t kDisc = {&AgMemDisc, &kIdDisc, &AgIoDisc};

// The Graphviz graph of a model; closed (with its layout) on destruction.
struct GvGraph {
  GVC_t* gvc;
  Agraph_t* g = nullptr;
  bool laidOut = false;
  std::vector<Agnode_t*> nodes;
  std::vector<std::pair<Agraph_t*, size_t>> clusters;  // subgraph, group
  std::vector<std::pair<Agnode_t*, size_t>> boxes;     // collapsed partitions: node, group
  std::vector<std::pair<Agedge_t*, std::pair<size_t, size_t>>> edges;

  explicit GvGraph(GVC_t* c) : gvc(c) {}
  ~GvGraph() {
    if (laidOut) gvFreeLayout(gvc, g);
    if (g) agclose(g);
  }
  GvGraph(const GvGraph&) = delete;
  GvGraph& operator=(const GvGraph&) = delete;
};

// Builds the graph: `labels` gives rendered text (for SVG); without it nodes
// are fixed-size boxes without text (the view draws its own).
// `collapsed` partitions are one box each; only the nodes `included` marks
// are built (empty: all), with the partitions and edges among them.
void buildGraph(GvGraph& gv, const frontend::PreparedModel& model, bool labels,
                const std::map<size_t, std::string>* colours, const CollapsedGroups& collapsed = {},
                const std::vector<char>& included = {}) {
  const graph::Graph& graph = model.graph;
  gv.g = agopen(cs("tessel"), Agdirected, &kDisc);
  if (!gv.g) throw std::runtime_error("Graphviz: cannot create a graph (" + lastError() + ")");
  Agraph_t* g = gv.g;
  agattr(g, AGRAPH, cs("rankdir"), cs("TB"));
  agattr(g, AGRAPH, cs("nodesep"), cs("0.2"));
  agattr(g, AGRAPH, cs("ranksep"), cs("0.3"));
  agattr(g, AGRAPH, cs("fontsize"), cs("10"));
  agattr(g, AGRAPH, cs("label"), cs(""));
  agattr(g, AGRAPH, cs("style"), cs(""));
  agattr(g, AGRAPH, cs("fillcolor"), cs(""));
  agattr(g, AGRAPH, cs("color"), cs(""));
  agattr(g, AGNODE, cs("shape"), cs("box"));
  agattr(g, AGNODE, cs("label"), cs(""));
  agattr(g, AGNODE, cs("width"), cs("0.75"));
  agattr(g, AGNODE, cs("height"), cs("0.5"));
  agattr(g, AGNODE, cs("fixedsize"), cs(labels ? "false" : "true"));
  agattr(g, AGNODE, cs("fontsize"), cs("10"));
  agattr(g, AGNODE, cs("style"), cs(labels ? "rounded,filled" : ""));
  agattr(g, AGNODE, cs("fillcolor"), cs("white"));
  agattr(g, AGNODE, cs("tooltip"), cs(""));
  agattr(g, AGNODE, cs("peripheries"), cs("1"));
  agattr(g, AGEDGE, cs("arrowsize"), cs("0.6"));

  std::vector<int> taskOf = taskOfGroups(model);
  std::vector<Agraph_t*> parentOf(graph.nodes.size(), g);
  std::vector<Agnode_t*> boxOf(graph.nodes.size(), nullptr);  // a node's collapsed partition
  auto left = [&](size_t n) { return !included.empty() && (n >= included.size() || !included[n]); };
  auto colourOf = [&](size_t group) {
    if (colours)
      if (auto it = colours->find(group); it != colours->end()) return it->second;
    return defaultClusterColour(group);
  };
  for (size_t group : clusterGroups(model)) {
    if (left(model.plan.groups[group].front())) continue;  // a partition's nodes share a band
    if (group < collapsed.size() && collapsed[group]) {
      Agnode_t* box = agnode(g, cs(numbered("p", group)), 1);
      if (!box) throw std::runtime_error("Graphviz: cannot create the box of partition " + std::to_string(group));
      auto [w, h] = partitionBoxSize(model.tasks[size_t(taskOf[group])].name);
      agset(box, cs("width"), cs(inches(w)));
      agset(box, cs("height"), cs(inches(h)));
      if (labels) {
        const size_t ops = model.plan.groups[group].size();
        agset(box, cs("label"),
              cs(escapeLabel(model.tasks[size_t(taskOf[group])].name) + "\\n" + std::to_string(ops) +
                 (ops == 1 ? " op" : " ops")));
        agset(box, cs("fillcolor"), cs(colourOf(group)));
        agset(box, cs("peripheries"), cs("2"));
      }
      gv.boxes.push_back({box, group});
      for (size_t n : model.plan.groups[group])
        if (n < graph.nodes.size()) boxOf[n] = box;
      continue;
    }
    std::string name = numbered("cluster_", group);
    Agraph_t* sub = agsubg(g, cs(name), 1);
    agset(sub, cs("label"), cs(model.tasks[size_t(taskOf[group])].name));
    agset(sub, cs("style"), cs("filled,rounded"));
    agset(sub, cs("fillcolor"), cs(colourOf(group)));
    agset(sub, cs("color"), cs("#9a9a9a"));
    gv.clusters.push_back({sub, group});
    for (size_t n : model.plan.groups[group])
      if (n < graph.nodes.size()) parentOf[n] = sub;
  }
  gv.nodes.resize(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (boxOf[i] || left(i)) continue;
    const graph::Node& node = graph.nodes[i];
    std::string name = numbered("n", i);
    Agnode_t* n = agnode(parentOf[i], cs(name), 1);
    if (!n) throw std::runtime_error("Graphviz: cannot create node " + node.name);
    gv.nodes[i] = n;
    std::string shape = outputShapeText(graph, i);
    if (labels) {
      agset(n, cs("label"), cs(escapeLabel(node.op) + "\\n" + escapeLabel(shape)));
      agset(n, cs("tooltip"), cs(escapeLabel(node.name)));
    } else {
      auto [w, h] = nodeSize(node.op, shape);
      agset(n, cs("width"), cs(inches(w)));
      agset(n, cs("height"), cs(inches(h)));
    }
  }
  std::set<std::pair<Agnode_t*, Agnode_t*>> joined;  // edges merge at collapsed partitions
  for (auto [from, to] : graphEdges(graph)) {
    Agnode_t* tail = boxOf[from] ? boxOf[from] : gv.nodes[from];
    Agnode_t* head = boxOf[to] ? boxOf[to] : gv.nodes[to];
    if (!tail || !head || tail == head || !joined.insert({tail, head}).second) continue;
    Agedge_t* e = agedge(g, tail, head, nullptr, 1);
    if (!e)
      throw std::runtime_error("Graphviz: cannot create edge " + graph.nodes[from].name + " -> " +
                               graph.nodes[to].name);
    gv.edges.push_back({e, {from, to}});
  }
}

void layOut(GvGraph& gv) {
  if (gvLayout(gv.gvc, gv.g, "dot") != 0) {
    std::string e = lastError();
    throw std::runtime_error("Graphviz dot layout failed" + (e.empty() ? std::string() : ": " + e) +
                             " (is the dot layout plugin installed?)");
  }
  gv.laidOut = true;
}

}  // namespace

std::string defaultClusterColour(size_t group) {
  // Graphviz's pastel19 scheme, as `tessel inspect --dot` uses.
  static const char* kPastel[] = {"#fbb4ae", "#b3cde3", "#ccebc5", "#decbe4", "#fed9a6",
                                  "#ffffcc", "#e5d8bd", "#fddaec", "#f2f2f2"};
  return kPastel[group % 9];
}

std::vector<int> taskOfGroups(const frontend::PreparedModel& model) {
  std::vector<int> taskOf(model.plan.groups.size(), -1);
  for (size_t t = 0; t < model.tasks.size(); ++t)
    for (size_t group : model.tasks[t].groups)
      if (group < taskOf.size()) taskOf[group] = int(t);
  return taskOf;
}

std::vector<size_t> clusterGroups(const frontend::PreparedModel& model) {
  std::vector<int> taskOf = taskOfGroups(model);
  std::vector<size_t> groups;
  for (size_t gi = 0; gi < taskOf.size(); ++gi)
    if (taskOf[gi] >= 0 && !model.plan.groups[gi].empty()) groups.push_back(gi);
  return groups;
}

std::vector<std::pair<size_t, size_t>> graphEdges(const graph::Graph& g) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& o : g.nodes[i].outputs)
      producer[o] = i;
  std::vector<std::pair<size_t, size_t>> edges;
  std::set<std::pair<size_t, size_t>> seen;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs)
      if (auto it = producer.find(in); it != producer.end() && it->second != i)
        if (seen.insert({it->second, i}).second) edges.push_back({it->second, i});
  return edges;
}

std::string outputShapeText(const graph::Graph& g, size_t node) {
  const graph::Node& n = g.nodes[node];
  if (n.outputs.empty()) return "";
  auto it = g.values.find(n.outputs[0]);
  if (it == g.values.end()) return "";
  std::string s;
  for (size_t i = 0; i < it->second.shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(it->second.shape[i]);
  }
  return s.empty() ? "scalar" : s;
}

CollapsedGroups allCollapsed(const frontend::PreparedModel& model) {
  CollapsedGroups out(model.plan.groups.size(), false);
  for (size_t group : clusterGroups(model))
    out[group] = true;
  return out;
}

namespace {

// The laid-out graph read back, origin at the top-left, y down.
GraphLayout readLayout(const GvGraph& gv) {
  GraphLayout out;
  boxf bb = GD_bb(gv.g);
  out.width = bb.UR.x - bb.LL.x;
  out.height = bb.UR.y - bb.LL.y;
  // Graphviz: points, y up. Ours: origin at the top-left, y down.
  auto fx = [&](double x) { return x - bb.LL.x; };
  auto fy = [&](double y) { return bb.UR.y - y; };
  for (size_t i = 0; i < gv.nodes.size(); ++i) {
    if (Agnode_t* n = gv.nodes[i])
      out.nodes.push_back({i, fx(ND_coord(n).x), fy(ND_coord(n).y), ND_width(n) * 72.0, ND_height(n) * 72.0});
  }
  out.edges.reserve(gv.edges.size());
  for (auto& [e, ends] : gv.edges) {
    LayoutEdge le{ends.first, ends.second, {}};
    if (const splines* spl = ED_spl(e)) {
      for (int b = 0; b < spl->size; ++b) {
        const bezier& bz = spl->list[b];
        // Pieces join at a shared point: keep the path 1 + 3k points long.
        for (int p = (b > 0 && !le.points.empty()) ? 1 : 0; p < bz.size; ++p)
          le.points.push_back({fx(bz.list[p].x), fy(bz.list[p].y)});
        if (bz.eflag) {
          le.hasTip = true;
          le.tipX = fx(bz.ep.x);
          le.tipY = fy(bz.ep.y);
        }
      }
    }
    out.edges.push_back(std::move(le));
  }
  for (auto [sub, group] : gv.clusters) {
    boxf cb = GD_bb(sub);
    out.clusters.push_back({group, fx(cb.LL.x), fy(cb.UR.y), cb.UR.x - cb.LL.x, cb.UR.y - cb.LL.y});
  }
  for (auto [box, group] : gv.boxes) {
    const double w = ND_width(box) * 72.0, h = ND_height(box) * 72.0;
    out.clusters.push_back({group, fx(ND_coord(box).x) - w / 2, fy(ND_coord(box).y) - h / 2, w, h, true});
  }
  return out;
}

// `labels`, `colours`: as buildGraph takes them. `render` is called with
// each band's laid-out Graphviz graph. Call with the mutex held.
BandedLayout layOutBands(const frontend::PreparedModel& model, const CollapsedGroups& collapsed, bool labels,
                         const std::map<size_t, std::string>* colours,
                         const std::function<void(const GvGraph&)>& render = {}) {
  BandedLayout out;
  out.v = verticesOf(model, collapsed);
  const Vertices& v = out.v;
  std::vector<std::pair<size_t, size_t>> placedEdges;
  for (auto [a, b] : v.edges)
    placedEdges.push_back({v.place[a], v.place[b]});
  out.cuts = bandCuts(v.count, placedEdges, v.clusterSpans, kBandVertices);
  for (size_t b = 0; b <= out.cuts.size(); ++b) {
    std::vector<char> included;
    if (!out.cuts.empty()) {
      included.resize(model.graph.nodes.size());
      for (size_t node = 0; node < included.size(); ++node)
        included[node] = out.bandOf(v.ofNode[node]) == b;
    }
    GvGraph gv(context());
    buildGraph(gv, model, labels, colours, collapsed, included);
    layOut(gv);
    out.bands.push_back(readLayout(gv));
    if (render) render(gv);
  }
  placeBands(out, model);
  return out;
}

std::string svgOf(const GvGraph& gv) {
  char* data = nullptr;
  unsigned int length = 0;
  if (gvRenderData(gv.gvc, gv.g, "svg", &data, &length) != 0 || !data) {
    std::string e = lastError();
    throw std::runtime_error("Graphviz cannot render SVG" + (e.empty() ? std::string() : ": " + e));
  }
  std::string svg(data, length);
  gvFreeRenderData(data);
  return svg;
}

// A band's SVG as an element of the whole: its root <svg> placed at (x, y),
// sized in the outer drawing's units (points), without its prologue.
std::string nestedSvg(const std::string& svg, double x, double y, double width, double height) {
  const size_t root = svg.find("<svg");
  const size_t end = svg.find('>', root);
  if (root == std::string::npos || end == std::string::npos) throw std::runtime_error("Graphviz wrote no <svg>");
  std::string tag = svg.substr(root, end - root);
  for (const char* attribute : {" width=\"", " height=\""}) {  // "123pt": dropped, set below
    const size_t at = tag.find(attribute);
    if (at != std::string::npos) tag.erase(at, tag.find('"', at + std::strlen(attribute)) + 1 - at);
  }
  char place[160];
  std::snprintf(place, sizeof place, " x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", x, y, width, height);
  return tag + place + svg.substr(end);
}

}  // namespace

GraphLayout layoutGraph(const frontend::PreparedModel& model, const CollapsedGroups& collapsed) {
  std::lock_guard lock(graphvizMutex());
  auto t0 = std::chrono::steady_clock::now();
  BandedLayout banded = layOutBands(model, collapsed, false, nullptr);
  GraphLayout out;
  out.width = banded.width;
  out.height = banded.height;
  if (!banded.cuts.empty()) out.edges = edgesBetweenBands(banded);
  for (size_t b = 0; b < banded.bands.size(); ++b)
    appendBand(out, std::move(banded.bands[b]), banded.dx[b], banded.dy[b]);
  std::sort(out.nodes.begin(), out.nodes.end(),
            [](const LayoutNode& a, const LayoutNode& b) { return a.node < b.node; });
  std::sort(out.clusters.begin(), out.clusters.end(),
            [](const LayoutCluster& a, const LayoutCluster& b) { return a.group < b.group; });
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::string renderSvg(const frontend::PreparedModel& model, const std::map<size_t, std::string>& clusterColours,
                      const CollapsedGroups& collapsed) {
  std::lock_guard lock(graphvizMutex());
  std::vector<std::string> svgs;
  const BandedLayout banded =
      layOutBands(model, collapsed, true, &clusterColours, [&](const GvGraph& gv) { svgs.push_back(svgOf(gv)); });
  if (svgs.size() == 1) return svgs.front();
  // Graphviz pads each drawing by 4 points: the bands and the outer drawing alike.
  constexpr double pad = 4;
  char head[400];
  std::snprintf(head, sizeof head,
                "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
                "<svg width=\"%.0fpt\" height=\"%.0fpt\" viewBox=\"%.2f %.2f %.2f %.2f\" "
                "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
                "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"white\"/>\n",
                banded.width + 2 * pad, banded.height + 2 * pad, -pad, -pad, banded.width + 2 * pad,
                banded.height + 2 * pad, -pad, -pad, banded.width + 2 * pad, banded.height + 2 * pad);
  std::string out = head;
  for (size_t b = 0; b < svgs.size(); ++b)
    out += nestedSvg(svgs[b], banded.dx[b] - pad, banded.dy[b] - pad, banded.bands[b].width + 2 * pad,
                     banded.bands[b].height + 2 * pad);
  for (const LayoutEdge& e : edgesBetweenBands(banded)) {
    const auto [x0, y0] = e.points.front();
    const auto [x1, y1] = e.points.back();
    char line[200];
    std::snprintf(line, sizeof line, "<path fill=\"none\" stroke=\"black\" d=\"M%.2f,%.2f L%.2f,%.2f\"/>\n", x0, y0, x1,
                  y1);
    out += line;
  }
  return out + "</svg>\n";
}

}  // namespace tessel::ui
