#pragma once

// Structural groups for HierarchicalLayout, found from the graph alone:
// repeated blocks in groups with many direct nodes (graphs without scopes,
// compiled graphs with rewritten names), chunks of consecutive nodes so any
// graph folds to a small view, and repeat marks (GroupTree::repeat_of) for
// groups with equal structure. Pure geometry like hierarchical_layout.h: op
// types come from GroupTree::node_op, never from the model (see
// hierarchical_layout_model.h for BuildGroups, which calls these after the
// model-aware scope and fusion groups).
//
// Everything here is iterative (hierarchies may be thousands of levels
// deep), deterministic (total sort keys, no pointer hashing, hashes only
// used as filters before an exact comparison) and O((V + E) log V)-ish: it
// runs on 100,000-node graphs in a few milliseconds.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "layout/hierarchical_layout.h"

namespace mi::layout {

// Makes `tree` well formed for the functions below: at least the root,
// `node_group` sized `num_nodes` (out of range = root), parent chains that
// do not reach the root (cycles, bad indices) cut and hung under it, and
// `label`, `kind`, `repeat_of` sized per group (kScope / -1 when missing).
void NormalizeGroupTree(GroupTree& tree, size_t num_nodes);

// Per node, its position in one topological order of the graph: nodes in
// index order, each preceded by its predecessors not placed yet (so index
// order when that is topological, as in exported models; graph inputs,
// numbered last by BuildLayoutInput, just before their first consumer).
// Edges closing a cycle are ignored. Exposed for tests.
std::vector<uint32_t> TopologicalRank(size_t num_nodes,
                                      std::span<const LayoutEdge> edges);

// For every group with more than `min_items` items (its direct nodes, plus
// child groups that are leaves holding one node or a fusion), finds a
// repeated block among the items in topological order and makes each
// repetition a kRepeat child group labelled "block K" (K counts from 1 per
// parent). Items outside the periodic run stay where they were. The period
// is the candidate (from gaps between equal op types) covering the most
// items; its phase (where blocks start) minimises the tensors crossing block
// boundaries; consecutive blocks must also have the same internal edges.
// Blocks larger than `min_items` are searched once more (a block of a
// block). Returns the number of groups added.
size_t AddRepeatedBlocks(GroupTree& tree, size_t num_nodes,
                         std::span<const LayoutEdge> edges,
                         size_t min_items = 64);

// Splits every group holding more than `chunk_above` items (direct nodes
// plus child groups) into runs of consecutive items in topological order:
// kChunk child groups of about sqrt(items) items each (at least
// items / chunk_above), so both the chunk count and the chunk size stay at
// most `chunk_above` (chunks of chunks above chunk_above^2 items). Labels:
// "nodes A–B" (1-based, counting the group's nodes in topological order), or
// "first … last" child label when a chunk holds only groups. Returns the
// number of groups added. `chunk_above` 0 = no chunks.
size_t AddChunks(GroupTree& tree, size_t num_nodes,
                 std::span<const LayoutEdge> edges, size_t chunk_above);

// Fills `repeat_of` for every group: the smallest-index group whose subtree
// has the same structure (kinds and shape of the nested groups, op types,
// and internal edges, all under the nodes' topological order), or -1 for
// the first of its class, for the root and for groups holding fewer than 2
// nodes. A hash filters candidates; equal structure is confirmed by an
// exact comparison, so there are no false positives. Returns the number of
// groups marked.
size_t MarkRepeats(GroupTree& tree, std::span<const LayoutEdge> edges);

}  // namespace mi::layout
