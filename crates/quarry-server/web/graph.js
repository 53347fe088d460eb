// The graph explorer. `#/graph?q=&type=`: entities found by name and by meaning
// (`GET /v1/graph/entities`, each item says which matched); an empty query lists the most
// mentioned. `#/graph/{entity_id}?depth=`: the entity with its notes and mention count, the
// episodes that mention it and its relations (`GET /v1/graph/entities/{id}`), and its
// neighbourhood (`…/neighbors?depth=1..3`) drawn as an SVG made here: a radial layout, one ring
// per hop, every node a link (Tab to it, Enter or click to move there), every edge labelled.

import { h, href, formatTime } from './dom.js';
import { s, errorBox } from './viewkit.js';

/** The reference's entity types, offered as a filter; a deployment may add others (typed in
 * the address as `?type=`). */
const TYPES = ['person', 'place', 'project', 'technology', 'concept', 'organization'];
const SEARCH_LIMIT = 50;
/** Beyond this many nodes a drawing stops being readable; the lists below it stay complete. */
const DRAW_LIMIT = 60;
const RING = 150;
const NODE_RADIUS = 16;
/** Least distance along a ring between two nodes, so their labels do not collide. */
const MIN_ARC = 120;
/** Half the width a node's label may take. */
const LABEL_ROOM = 90;

export async function render(main, params, ctx) {
  if (params.view === 'graph-entity') return renderEntity(main, params, ctx);
  return renderSearch(main, params, ctx);
}

// ---- search ------------------------------------------------------------------------------------

async function renderSearch(main, params, ctx) {
  const query = params.q || '';
  const type = params.type || '';
  const input = h('input', { id: 'graph-q', type: 'search', name: 'q', value: query, autocomplete: 'off', 'aria-describedby': 'graph-q-help' });
  const typeSelect = h(
    'select',
    { id: 'graph-type', name: 'type' },
    h('option', { value: '' }, 'Any type'),
    [...new Set([...TYPES, ...(type ? [type] : [])])].map((name) => h('option', { value: name, selected: name === type }, name)),
  );
  const form = h(
    'form',
    {
      role: 'search',
      class: 'search graph-search',
      id: 'graph-search',
      onsubmit: (event) => {
        event.preventDefault();
        ctx.navigate(href('/graph', { q: input.value.trim(), type: typeSelect.value }));
      },
    },
    h('div', { class: 'field' }, h('label', { for: 'graph-q' }, 'Name or meaning'), input),
    h('div', { class: 'field' }, h('label', { for: 'graph-type' }, 'Type'), typeSelect),
    h('button', { type: 'submit', class: 'button primary' }, 'Search'),
    h('p', { class: 'help', id: 'graph-q-help' }, 'Entities whose names contain the words come first, then those close in meaning.'),
  );
  const results = h('div', { class: 'graph-results', id: 'graph-results', 'aria-live': 'polite' });
  main.append(h('h1', {}, 'Graph'), form, results);

  const found = await ctx.api('GET', `/v1/graph/entities${searchQuery(query, type)}`);
  if (ctx.signal.aborted) return;
  const byName = found.filter((item) => item.match !== 'meaning');
  const byMeaning = found.filter((item) => item.match === 'meaning');
  if (found.length === 0) {
    results.append(
      h('p', { class: 'empty' }, query ? `No entity matches “${query}”.` : 'The graph is empty: add conversation episodes and their entities appear here.'),
    );
    return;
  }
  if (!query) {
    results.append(resultList('graph-most', type ? `Most mentioned ${type} entities` : 'Most mentioned', byName));
    return;
  }
  results.append(
    resultList('graph-by-name', 'Matching the name', byName, 'No name contains these words.'),
    resultList('graph-by-meaning', 'Close in meaning', byMeaning, 'Nothing else comes close in meaning (or the server has no embedder).'),
  );
}

function searchQuery(query, type) {
  const params = new URLSearchParams({ limit: String(SEARCH_LIMIT) });
  if (query) params.set('q', query);
  if (type) params.set('type', type);
  return `?${params}`;
}

function resultList(id, title, items, emptyText) {
  return h(
    'section',
    { class: 'graph-result-group', 'aria-labelledby': `${id}-title` },
    h('h2', { id: `${id}-title` }, title, ' ', h('span', { class: 'count' }, `(${items.length})`)),
    items.length === 0
      ? h('p', { class: 'empty' }, emptyText)
      : h(
          'ul',
          { class: 'graph-entity-list', id },
          items.map((item) =>
            h(
              'li',
              {},
              h('a', { href: `#/graph/${encodeURIComponent(item.id)}` }, item.title),
              ' ',
              h('span', { class: `badge type-badge type-${cssName(item.entity_type)}` }, item.entity_type),
              ' ',
              h('span', { class: 'muted' }, mentions(item.mention_count)),
              item.match === 'meaning' && typeof item.score === 'number'
                ? h('span', { class: 'muted' }, ` · similarity ${item.score.toFixed(2)}`)
                : null,
              item.notes ? h('p', { class: 'graph-notes' }, item.notes) : null,
            ),
          ),
        ),
  );
}

// ---- one entity ------------------------------------------------------------------------------

async function renderEntity(main, params, ctx) {
  const id = params.entity_id;
  let depth = clampDepth(params.depth);
  const [found, hood] = await Promise.all([
    ctx.api('GET', `/v1/graph/entities/${encodeURIComponent(id)}`),
    ctx.api('GET', neighborsPath(id, depth)),
  ]);
  if (ctx.signal.aborted) return;
  const names = new Map([[found.id, found]]);
  for (const neighbor of hood.entities) names.set(neighbor.entity.id, neighbor.entity);

  const depthSelect = h(
    'select',
    { id: 'graph-depth' },
    [1, 2, 3].map((value) => h('option', { value: String(value), selected: value === depth }, `${value} ${value === 1 ? 'hop' : 'hops'}`)),
  );
  const drawing = h('div', { class: 'graph-drawing', id: 'graph-drawing' });
  const caption = h('p', { class: 'help', id: 'graph-drawing-help' });
  const show = (neighborhood) => {
    drawing.replaceChildren(drawNeighborhood(neighborhood, (drawing.clientWidth || window.innerWidth) > 640));
    const reached = neighborhood.entities.length;
    caption.textContent = reached === 0
      ? 'No relations yet: nothing to draw.'
      : `${reached} ${reached === 1 ? 'entity' : 'entities'} within ${depth} ${depth === 1 ? 'hop' : 'hops'}`
        + (reached > DRAW_LIMIT ? `; the ${DRAW_LIMIT} nearest are drawn.` : '.')
        + ' Tab to a node and press Enter to open it.';
  };
  let drawn = 0;
  depthSelect.addEventListener('change', async () => {
    depth = clampDepth(depthSelect.value);
    // Only the latest depth asked for is drawn, however the answers arrive.
    const mine = ++drawn;
    // The address keeps the depth without re-rendering the page (focus stays on the select).
    history.replaceState(null, '', href(`/graph/${encodeURIComponent(id)}`, { depth }));
    drawing.setAttribute('aria-busy', 'true');
    try {
      const next = await ctx.api('GET', neighborsPath(id, depth));
      if (ctx.signal.aborted || mine !== drawn) return;
      show(next);
    } catch (error) {
      if (error.name !== 'AbortError' && mine === drawn) drawing.replaceChildren(errorBox(error));
    } finally {
      if (mine === drawn) drawing.removeAttribute('aria-busy');
    }
  }, { signal: ctx.signal });

  main.append(
    h('p', { class: 'breadcrumbs' }, h('a', { href: '#/graph' }, 'Graph'), ' › ', found.entity_type),
    h('h1', {}, found.title),
    h(
      'dl',
      { class: 'facts graph-facts' },
      h('dt', {}, 'Type'), h('dd', {}, h('span', { class: `badge type-badge type-${cssName(found.entity_type)}` }, found.entity_type)),
      h('dt', {}, 'Mentions'), h('dd', { id: 'graph-mentions' }, String(found.mention_count ?? 0)),
      h('dt', {}, 'Last seen'), h('dd', {}, formatTime(found.last_seen_at)),
    ),
    h('section', { 'aria-labelledby': 'graph-notes-title' },
      h('h2', { id: 'graph-notes-title' }, 'Notes'),
      found.notes ? h('p', { class: 'graph-notes', id: 'graph-notes' }, found.notes) : h('p', { class: 'empty' }, 'No notes.')),
    h(
      'section',
      { class: 'graph-neighborhood', 'aria-labelledby': 'graph-hood-title' },
      h('div', { class: 'section-head' },
        h('h2', { id: 'graph-hood-title' }, 'Neighbourhood'),
        h('div', { class: 'field inline' }, h('label', { for: 'graph-depth' }, 'Depth'), depthSelect)),
      caption,
      drawing,
    ),
    relationsSection(found, names),
    episodesSection(found.episodes || []),
  );
  show(hood);
}

function clampDepth(raw) {
  const depth = Number.parseInt(raw, 10);
  return Number.isInteger(depth) && depth >= 1 && depth <= 3 ? depth : 2;
}

function neighborsPath(id, depth) {
  return `/v1/graph/entities/${encodeURIComponent(id)}/neighbors?depth=${depth}&limit=200`;
}

function relationsSection(entity, names) {
  const relations = entity.relations || [];
  const nameOf = (id) => (names.get(id) ? names.get(id).title : id);
  const link = (id) => (id === entity.id ? h('strong', {}, entity.title) : h('a', { href: `#/graph/${encodeURIComponent(id)}` }, nameOf(id)));
  return h(
    'section',
    { 'aria-labelledby': 'graph-relations-title' },
    h('h2', { id: 'graph-relations-title' }, 'Relations ', h('span', { class: 'count' }, `(${relations.length})`)),
    relations.length === 0
      ? h('p', { class: 'empty' }, 'No relations.')
      : h(
          'ul',
          { class: 'graph-relations', id: 'graph-relations' },
          relations.map((relation) =>
            h(
              'li',
              {},
              link(relation.from_id),
              ' ',
              h('span', { class: 'relation-label' }, relation.label),
              ' ',
              link(relation.to_id),
              ' ',
              h('span', { class: 'muted' }, `· ${mentions(relation.mention_count)}`),
              relation.notes ? h('p', { class: 'graph-notes' }, relation.notes) : null,
            ),
          ),
        ),
  );
}

function episodesSection(episodes) {
  return h(
    'section',
    { 'aria-labelledby': 'graph-episodes-title' },
    h('h2', { id: 'graph-episodes-title' }, 'Episodes that mention it ', h('span', { class: 'count' }, `(${episodes.length})`)),
    episodes.length === 0
      ? h('p', { class: 'empty' }, 'No episode mentions it (it was made some other way).')
      : h(
          'ol',
          { class: 'graph-episodes', id: 'graph-episodes' },
          episodes.map((episode) =>
            h(
              'li',
              {},
              h('p', {}, h('span', { class: 'chat-role' }, 'User: '), episode.user_message),
              h('p', { class: 'muted' }, h('span', { class: 'chat-role' }, 'Assistant: '), shorten(episode.assistant_response, 240)),
              h(
                'p',
                { class: 'small' },
                formatTime(episode.created_at),
                ' · ',
                h('a', { href: `#/documents/${encodeURIComponent(episode.id)}` }, 'Read the episode'),
              ),
            ),
          ),
        ),
  );
}

// ---- the drawing -------------------------------------------------------------------------------

/**
 * A radial layout: the entity in the middle, hop `d` on a ring of radius `d × RING`. Each node
 * of a ring wants the mean angle of the nodes it hangs from on the rings inside it, so a branch
 * stays on its side of the drawing; nodes of a ring are then pushed apart to at least
 * `MIN_ARC` apart (less when the ring is crowded) and the ring turned back so that on average
 * every node sits where it wanted to be.
 */
function layout(hood, start) {
  const nodes = new Map();
  nodes.set(hood.root.id, { entity: hood.root, depth: 0, x: 0, y: 0, angle: 0 });
  const drawn = hood.entities.slice(0, DRAW_LIMIT);
  const rings = new Map();
  for (const { entity, depth } of drawn) {
    if (!rings.has(depth)) rings.set(depth, []);
    rings.get(depth).push({ entity, depth });
  }
  const linked = new Map();
  for (const relation of hood.relations) {
    for (const [a, b] of [[relation.from_id, relation.to_id], [relation.to_id, relation.from_id]]) {
      if (!linked.has(a)) linked.set(a, []);
      linked.get(a).push(b);
    }
  }
  const depths = [...rings.keys()].sort((a, b) => a - b);
  for (const depth of depths) {
    const ring = rings.get(depth);
    const radius = depth * RING;
    ring.forEach((item, index) => {
      const parents = (linked.get(item.entity.id) || []).map((id) => nodes.get(id)).filter((node) => node && node.depth < depth);
      // The first ring has only the root inside it: spread it evenly from `start`.
      item.want = depth === 1 || parents.length === 0
        ? start + (2 * Math.PI * index) / ring.length
        : meanAngle(parents.map((node) => node.angle));
    });
    ring.sort((a, b) => a.want - b.want);
    const gap = Math.min((2 * Math.PI) / ring.length, MIN_ARC / radius);
    const angles = [];
    ring.forEach((item, index) => {
      angles.push(index === 0 ? item.want : Math.max(item.want, angles[index - 1] + gap));
    });
    const shift = ring.reduce((sum, item, index) => sum + item.want - angles[index], 0) / (ring.length || 1);
    ring.forEach((item, index) => {
      const angle = angles[index] + shift;
      nodes.set(item.entity.id, {
        entity: item.entity,
        depth,
        angle,
        x: round(radius * Math.sin(angle)),
        y: round(-radius * Math.cos(angle)),
      });
    });
  }
  // Edges between drawn nodes; several relations between one pair share one line.
  const edges = new Map();
  for (const relation of hood.relations) {
    const from = nodes.get(relation.from_id);
    const to = nodes.get(relation.to_id);
    if (!from || !to || from === to) continue;
    const key = `${relation.from_id}\u0000${relation.to_id}`;
    if (!edges.has(key)) edges.set(key, { from, to, labels: [] });
    if (!edges.get(key).labels.includes(relation.label)) edges.get(key).labels.push(relation.label);
  }
  // The drawing is cut to its nodes (and room for their labels), not to its outer ring.
  const placed = [...nodes.values()];
  const box = {
    left: Math.min(...placed.map((node) => node.x)) - LABEL_ROOM,
    right: Math.max(...placed.map((node) => node.x)) + LABEL_ROOM,
    top: Math.min(...placed.map((node) => node.y)) - NODE_RADIUS - 24,
    bottom: Math.max(...placed.map((node) => node.y)) + NODE_RADIUS + 36,
  };
  return { nodes: placed, edges: [...edges.values()], box };
}

/** `wide`: the drawing has room sideways, so the first ring starts at 3 o'clock and a short
 * chain runs across the page (on a phone it runs down, from 12 o'clock). */
function drawNeighborhood(hood, wide) {
  const { nodes, edges, box } = layout(hood, wide ? Math.PI / 2 : 0);
  const width = Math.max(box.right - box.left, 320);
  const height = Math.max(box.bottom - box.top, 120);
  // Drawn at its natural size (one unit a pixel) where there is room, scaled down where not.
  const svg = s('svg', {
    class: 'graph-svg',
    id: 'graph-svg',
    width: round(width),
    height: round(height),
    viewBox: `${round(box.left - (width - (box.right - box.left)) / 2)} ${round(box.top - (height - (box.bottom - box.top)) / 2)} ${round(width)} ${round(height)}`,
    role: 'group',
    'aria-labelledby': 'graph-svg-title',
    preserveAspectRatio: 'xMidYMid meet',
  });
  svg.append(
    s('title', { id: 'graph-svg-title' }, `Neighbourhood of ${hood.root.title}`),
    s('defs', {}, s('marker', {
      id: 'graph-arrow', viewBox: '0 0 10 10', refX: '10', refY: '5', markerWidth: '7', markerHeight: '7', orient: 'auto-start-reverse',
    }, s('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'graph-arrow' }))),
  );
  for (const depth of [...new Set(nodes.map((node) => node.depth))].filter((d) => d > 0)) {
    svg.append(s('circle', { class: 'graph-ring', cx: 0, cy: 0, r: depth * RING }));
  }
  const edgeLayer = s('g', { class: 'graph-edges' });
  const labelLayer = s('g', { class: 'graph-edge-labels', 'aria-hidden': 'true' });
  for (const edge of edges) {
    const { x1, y1, x2, y2 } = trimmed(edge.from, edge.to);
    const label = edge.labels.join(', ');
    edgeLayer.append(s('line', { class: 'graph-edge', x1, y1, x2, y2, 'marker-end': 'url(#graph-arrow)' },
      s('title', {}, `${edge.from.entity.title} ${label} ${edge.to.entity.title}`)));
    labelLayer.append(s('text', {
      class: 'graph-edge-label',
      x: round((x1 + x2) / 2),
      y: round((y1 + y2) / 2 - 4),
      'text-anchor': 'middle',
    }, shorten(label, 28)));
  }
  const nodeLayer = s('g', { class: 'graph-nodes' });
  // Tab order is document order: nearest ring first, clockwise within a ring (the layout's
  // order), so a keyboard walks outwards from the entity.
  for (const node of [...nodes].sort((a, b) => a.depth - b.depth || a.angle - b.angle)) nodeLayer.append(drawNode(node));
  svg.append(edgeLayer, labelLayer, nodeLayer);
  return svg;
}

function drawNode(node) {
  const { entity, depth, x, y } = node;
  const type = cssName(entity.entity_type);
  const radius = depth === 0 ? NODE_RADIUS + 6 : NODE_RADIUS;
  const label = s('text', { class: 'graph-node-label', x, y: round(y + radius + 18), 'text-anchor': 'middle' }, shorten(entity.title, 22));
  const circle = s('circle', { class: 'graph-node-dot', cx: x, cy: y, r: radius });
  const hops = depth === 1 ? '1 hop' : `${depth} hops`;
  if (depth === 0) {
    return s('g', { class: `graph-node graph-root type-${type}`, 'data-id': entity.id },
      s('title', {}, `${entity.title} (${entity.entity_type}), this page`), circle, label);
  }
  return s(
    'a',
    {
      class: `graph-node type-${type} depth-${depth}`,
      href: `#/graph/${encodeURIComponent(entity.id)}`,
      'data-id': entity.id,
      'aria-label': `${entity.title}, ${entity.entity_type}, ${hops} away`,
    },
    s('title', {}, `${entity.title} (${entity.entity_type}) · ${mentions(entity.mention_count)}`),
    circle,
    label,
  );
}

/** The line between two node centres, cut back to the circles' edges so arrows stay visible. */
function trimmed(from, to) {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const length = Math.hypot(dx, dy) || 1;
  const fromR = (from.depth === 0 ? NODE_RADIUS + 6 : NODE_RADIUS) + 2;
  const toR = (to.depth === 0 ? NODE_RADIUS + 6 : NODE_RADIUS) + 3;
  return {
    x1: round(from.x + (dx * fromR) / length),
    y1: round(from.y + (dy * fromR) / length),
    x2: round(to.x - (dx * toR) / length),
    y2: round(to.y - (dy * toR) / length),
  };
}

function meanAngle(angles) {
  const x = angles.reduce((sum, a) => sum + Math.sin(a), 0);
  const y = angles.reduce((sum, a) => sum + Math.cos(a), 0);
  const angle = Math.atan2(x, y);
  return angle < 0 ? angle + 2 * Math.PI : angle;
}

// ---- small pieces ------------------------------------------------------------------------------

function round(value) {
  return Math.round(value * 10) / 10;
}

function shorten(text, max) {
  const chars = [...String(text ?? '')];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : chars.join('');
}

function mentions(count) {
  const n = Number(count) || 0;
  return n === 1 ? '1 mention' : `${n} mentions`;
}

/** A type name usable in a class (`type-person`); anything odd becomes `-`. */
function cssName(text) {
  return String(text || 'unknown').toLowerCase().replace(/[^a-z0-9_-]+/g, '-');
}
