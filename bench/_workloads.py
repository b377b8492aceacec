"""The steps measured in fresh processes: workload → its lanes (``{"ours": step, "torch": step, ...}``), built
from (torch or None, batch).

``bench.memory`` reads them in the parent, ``bench._fresh``'s child builds one (importing this module only
then, as it imports everything heavy), and ``bench.accelerations`` times the ``"ours"`` lanes.  It sits
below all three, so none of them imports another back.
"""

from . import mlp, resnet

WORKLOADS = {
    "mlp_step": lambda torch, batch: mlp.step_workload(torch),
    "mlp_hvp": lambda torch, batch: mlp.hvp_workload(torch),
    "penalty": lambda torch, batch: mlp.penalty_workload(torch),
    "resnet_step": resnet.step_workload,
}
