"""A tiny Composer Trainer on the CPU (an MLP, 6 batches, SGD), with no
traceprof import; a DistributedSampler, so that `composer -n 2` runs it
too.  For test/integration/torch_composer.sh.

    composer_tiny.py plain|composer
        composer: with Composer's own profiler, cyclic_schedule(wait=1,
        warmup=1, active=2, repeat=1), its JSONTraceHandler writing to
        ctraces/ and its TorchProfiler to torch_traces/.
"""
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from composer import Trainer
from composer.models import ComposerClassifier
from composer.profiler import JSONTraceHandler, Profiler, cyclic_schedule
from composer.utils import dist

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
model = ComposerClassifier(net, num_classes=2)
ds = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
dl = DataLoader(ds, batch_size=8, sampler=dist.get_sampler(ds, shuffle=False))
prof = None
if sys.argv[1] == "composer":
    prof = Profiler(schedule=cyclic_schedule(wait=1, warmup=1, active=2, repeat=1),
                    trace_handlers=[JSONTraceHandler(folder="ctraces", overwrite=True)],
                    torch_prof_folder="torch_traces", torch_prof_overwrite=True)
trainer = Trainer(model=model, train_dataloader=dl, max_duration="6ba", device="cpu",
                  optimizers=torch.optim.SGD(model.parameters(), lr=0.1), profiler=prof,
                  progress_bar=False, log_to_console=False, loggers=[])
trainer.fit()
print("done")
