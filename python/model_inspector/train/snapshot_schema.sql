-- The training snapshot, format version 1 (docs/reference/training-snapshot.md).
-- Written by model_inspector.train (Python's sqlite3), read by the C++ core
-- (src/importers/training_snapshot). One self-contained SQLite file: every
-- tensor is inside it, so a snapshot copied to another machine opens there.
--
-- Conventions: steps are the optimizer-step counter as the monitor counts
-- it (0 = the first step it saw); a layer is a module of the model (its
-- path from the root module, "encoder.layers.0.linear1"; the root is "");
-- REAL columns hold NULL when the value was not measured (never NaN: a NaN
-- measurement is counted in the *_nan columns and the norm is NULL).

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- Keys (all text; numbers as decimal text, JSON where noted):
--   format          "model-inspector/training-snapshot"
--   version         "1"
--   created         UTC ISO 8601, when the snapshot was written
--   host, python, torch, platform
--   command         JSON array: the script and its arguments
--   model           the root module's class name
--   optimizer       the optimizer's class name ("SGD", "Adam", ...)
--   optimizer_config JSON: [{"lr", "momentum", "weight_decay", "betas", "eps",
--                   "layers": [layer names whose parameters the group holds]}]
--   triggers        JSON array of the trigger specs armed ("loss_spike:3:10", ...)
--   thresholds      JSON {"vanishing": 1e-5, "exploding": 50, "dead": 0.3,
--                   "grad_norm": 100, "loss_spike_factor": 3, "loss_spike_window": 10,
--                   "act_range": 1e4}
--   capture_window  K: tensor-level capture of K steps before and K after
--   anomaly_step    the step of the first trigger hit (absent: none fired)
--   window_first, window_last  the captured steps' range (absent: none)
--   status          "complete" (the window filled) | "ended" (the script
--                   ended before K steps after) | "no_anomaly"
--   sample_limit    tensors above this many elements keep a strided sample

CREATE TABLE layers (
  id            INTEGER PRIMARY KEY,   -- 0.. in module registration order
  name          TEXT NOT NULL UNIQUE,  -- module path; "" for the root
  type          TEXT NOT NULL,         -- class name: "Linear", "LayerNorm", ...
  parent        INTEGER,               -- enclosing layer id (NULL for the root)
  forward_order INTEGER,               -- rank of its first forward call in a step (NULL: never called)
  param_count   INTEGER NOT NULL,      -- its own parameters' elements (not its children's)
  attributes    TEXT NOT NULL DEFAULT '{}'  -- JSON: in_features, out_features, normalized_shape,
                                            -- eps, num_heads, fan_in, fan_out, init_std (std of the
                                            -- weight when the monitor attached), ...
);

-- Forward data flow between layers (the output of src feeds dst), observed
-- from the tensors passed between modules' forward calls; layers joined
-- only through functional code are joined in forward order. Gradients flow
-- the other way.
CREATE TABLE edges (
  src INTEGER NOT NULL,
  dst INTEGER NOT NULL,
  PRIMARY KEY (src, dst)
);

-- Cheap statistics of every step.
CREATE TABLE steps (
  step        INTEGER PRIMARY KEY,
  loss        REAL,     -- NULL when not finite (see loss_nonfinite)
  loss_nonfinite INTEGER NOT NULL DEFAULT 0,
  grad_norm   REAL,     -- global L2 norm of all gradients before clipping; NULL if not finite
  grad_nonfinite INTEGER NOT NULL DEFAULT 0,  -- non-finite gradient elements
  lr          REAL,     -- the largest lr over the param groups
  loss_scale  REAL,     -- the loss scale when a scaler was seen; NULL otherwise
  clipped     INTEGER,  -- 1 when clip_grad_norm_ was called this step, 0 when not, NULL unknown
  elapsed_ns  INTEGER,  -- wall time of the step (end of one optimizer step to the next)
  captured    INTEGER NOT NULL DEFAULT 0  -- 1: its tensors are in `tensors`
);

-- Cheap per-layer statistics of every step. Norms are L2. "act" = the
-- layer's output (first tensor output), "in" = its first tensor input,
-- "gout" = the gradient of the loss with respect to its output.
CREATE TABLE layer_steps (
  step               INTEGER NOT NULL,
  layer              INTEGER NOT NULL,
  weight_norm        REAL,   -- all its own parameters together, after the step
  grad_norm          REAL,   -- its parameters' gradients together
  update_norm        REAL,   -- || params after - params before || of this step
  update_ratio       REAL,   -- update_norm / weight_norm (before the step)
  grad_zero_fraction REAL,   -- share of its parameters' gradient elements exactly 0
  dead_fraction      REAL,   -- share of its output units (rows of the weight) whose gradient is all 0
  grad_nan           INTEGER NOT NULL DEFAULT 0,
  grad_inf           INTEGER NOT NULL DEFAULT 0,
  act_abs_max        REAL,
  act_rms            REAL,
  act_mean           REAL,
  act_std            REAL,
  act_zero_fraction  REAL,
  act_nan            INTEGER NOT NULL DEFAULT 0,
  act_inf            INTEGER NOT NULL DEFAULT 0,
  act_dtype          TEXT,   -- "float32", "float16", ...
  in_abs_max         REAL,
  in_rms             REAL,
  in_nan             INTEGER NOT NULL DEFAULT 0,
  in_inf             INTEGER NOT NULL DEFAULT 0,
  gout_norm          REAL,
  gout_abs_max       REAL,
  gout_nan           INTEGER NOT NULL DEFAULT 0,
  gout_inf           INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (step, layer)
);

-- Every trigger hit, in the order they fired.
CREATE TABLE triggers (
  id        INTEGER PRIMARY KEY,
  step      INTEGER NOT NULL,
  trigger   TEXT NOT NULL,     -- "loss_spike", "grad_norm", "nan", "inf", "act_range", "dead_units", a predicate's name
  layer     INTEGER,           -- the layer it fired on (NULL: the whole model, e.g. the loss)
  value     REAL,
  threshold REAL,
  detail    TEXT NOT NULL DEFAULT ''
);

-- Tensors of the captured steps. `data` is a whole NumPy .npy file (format
-- 1.0, little-endian, C order). Tensors above sample_limit elements keep the
-- elements at flat indices 0, k, 2k, ... (sampled = 1, sample_stride = k)
-- as a 1-D array; `shape` is always the whole tensor's.
CREATE TABLE tensors (
  id            INTEGER PRIMARY KEY,
  step          INTEGER NOT NULL,
  layer         INTEGER NOT NULL,
  kind          TEXT NOT NULL,   -- "activation" | "input" | "weight" | "grad" | "grad_output" | "attention"
  name          TEXT NOT NULL DEFAULT '',  -- parameter name ("weight", "bias") or output index
  dtype         TEXT NOT NULL,   -- as stored
  shape         TEXT NOT NULL,   -- JSON array
  sampled       INTEGER NOT NULL DEFAULT 0,
  sample_stride INTEGER NOT NULL DEFAULT 1,
  data          BLOB NOT NULL
);
CREATE INDEX tensors_by_step_layer ON tensors (step, layer, kind);
-- attention: per-head attention weights of a multi-head attention layer,
-- shape [heads, queries, keys], of sample 0 of the batch (name "sample0").

-- Histograms of captured steps: `bins` equal-width bins over [lo, hi] of
-- the finite values; counts is a JSON array of integers.
CREATE TABLE histograms (
  step   INTEGER NOT NULL,
  layer  INTEGER NOT NULL,
  kind   TEXT NOT NULL,        -- "activation" | "grad"
  lo     REAL NOT NULL,
  hi     REAL NOT NULL,
  counts TEXT NOT NULL,
  nan    INTEGER NOT NULL DEFAULT 0,
  inf    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (step, layer, kind)
);

-- Per-sample statistics of captured steps (batch dimension 0 of each
-- layer's activation), for "normal vs anomalous sample".
CREATE TABLE sample_stats (
  step      INTEGER NOT NULL,
  sample    INTEGER NOT NULL,
  layer     INTEGER NOT NULL,
  abs_max   REAL,
  rms       REAL,
  nonfinite INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (step, sample, layer)
);
-- The samples of a step the monitor singles out: the most anomalous one
-- (largest activation at the first anomalous layer, or non-finite) and a
-- normal one (the median); role "anomalous" | "normal".
CREATE TABLE samples (
  step   INTEGER NOT NULL,
  sample INTEGER NOT NULL,
  role   TEXT NOT NULL,
  score  REAL,
  PRIMARY KEY (step, sample)
);

-- 2-D projections of per-sample activations of a layer at a captured step
-- (PCA always; t-SNE when scikit-learn is importable).
CREATE TABLE projections (
  step      INTEGER NOT NULL,
  layer     INTEGER NOT NULL,
  method    TEXT NOT NULL,     -- "pca" | "tsne"
  sample    INTEGER NOT NULL,
  x         REAL NOT NULL,
  y         REAL NOT NULL,
  anomalous INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (step, layer, method, sample)
);
