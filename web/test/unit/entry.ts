// The modules the Node unit tests exercise, compiled into one ES module by
// unit_lib.mjs (vite's library build; no browser needed).

export { formatHash, parseHash, defaultUrlState, kDefaultTabs } from '../../src/core/url_state';
export { formatSelection, parseSelection, sameSelection, describeSelection } from '../../src/core/selection';
export { initialState, urlStateOf, emptyResolved, kDetailsHint } from '../../src/core/state';
export { reduce } from '../../src/core/reducer';
export { Store } from '../../src/core/store';
export { SelectionController } from '../../src/core/selection_controller';
export { resultBlocks, headerOf, cellText, kMaxResultRows } from '../../src/base/result_tables';
export { paneHasGraph, runUsable } from '../../src/core/state';
export { errorParts, linkNoteText, pairCommand } from '../../src/components/run_notes';
export { drawGrid, gridRange, cellAt, labelStride } from '../../src/views/cluster/cluster_draw';
export { collectiveRanksToOpen } from '../../src/views/cluster/index';
export { DiffController } from '../../src/core/diff_controller';
export { diffKey, graphDiffPair, timelineDiffPair } from '../../src/core/state';
export { paneDiff, DiffKind, DiffTiming } from '../../src/views/graph/diff_marks';
export { diffFill } from '../../src/views/graph/scene';
export { slowerLabels, slowerNodes } from '../../src/views/timeline/diff_marks';
export { probeSettingsOf, probeNodeName, probeKey, kDefaultProbeSettings } from '../../src/core/state';
export { statValue, entryValue, colourStats, firstNanNode } from '../../src/rpc/probe_api';
