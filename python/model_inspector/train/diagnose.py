"""`model_inspector.train.diagnose(snapshot)`: the training diagnosis of a
snapshot the Monitor wrote, as a dict.

It opens the snapshot as any run is opened (`model_inspector.open`) and runs
the registered analysis "training_diagnosis" (src/analysis/training,
docs/design/training-diagnosis.md); the result's fields are those of
docs/reference/schemas/training-diagnosis.schema.json.
"""

from ..run import open as _open


def diagnose(snapshot_path, vanishing=None, exploding=None, dead=None, update_ratio=None):
    """The training diagnosis of the snapshot at `snapshot_path`: a dict
    with "score" (0-100), per-layer health ("layers"), the anomaly timeline
    ("steps"), the heat map, the propagation "chain" and the ranked
    "causes" (each with evidence, confidence and a fix).

    `vanishing`, `exploding` and `dead` override the snapshot's thresholds
    (the gradient-norm floor and ceiling, the dead_fraction alert);
    `update_ratio` the update / weight ratio flagged (default 0.1). Raises
    model_inspector.MalformedInput (or IoError) for a file that is not a
    readable snapshot, InvalidArgument for a run that is not a training
    snapshot or a bad parameter."""
    params = {name: value for name, value in (("vanishing", vanishing), ("exploding", exploding),
                                              ("dead", dead), ("update_ratio", update_ratio))
              if value is not None}
    with _open(snapshot_path) as run:
        return run.analyze("training_diagnosis", **params)
