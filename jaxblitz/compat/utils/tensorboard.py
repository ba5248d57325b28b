"""Blitz 4, "Train the network" (watching it train): ``torch.utils.tensorboard``.

    from torch.utils.tensorboard import SummaryWriter
    writer = SummaryWriter()              # runs/<Mon DD_HH-MM-SS>_<host>
    writer.add_scalar("loss/train", loss.item(), epoch)

``SummaryWriter`` writes TensorBoard event files as torch's does, with the
``tensorboard`` package's own event-file writer and protocol buffers: the same
tags, steps, values, histogram buckets and PNG images, from compat tensors, NumPy
arrays or numbers. As in torch, importing this module needs ``tensorboard``
(``pip install tensorboard``); without it the import raises ``ImportError``, so
a script's ``try: ... except ImportError`` fallback works as with torch.

``add_graph`` (torch traces the model with TorchScript, which compat does not
have), ``add_embedding`` and the video, audio, mesh, PR-curve, custom-scalar and
ONNX methods are refused by name.
"""

from __future__ import annotations

import os
import re
import socket
import time
from datetime import datetime
from typing import Any

import tensorboard

if tuple(
    int(part)
    for part in re.findall(r"\d+", getattr(tensorboard, "__version__", "0"))[:2]
) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

from tensorboard.compat.proto.event_pb2 import Event, SessionLog  # noqa: E402
from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: E402
from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from jaxblitz.compat._not_offered import NotOffered  # noqa: E402
from jaxblitz.compat.utils._tensorboard_summary import (  # noqa: E402
    HistogramProto,
    Summary,
    histogram,
    hparams,
    image,
    scalar,
    text,
)

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]


class FileWriter:
    """torch's ``FileWriter``: events and summaries into one event file."""

    def __init__(
        self,
        log_dir: Any,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        self.event_writer = EventFileWriter(
            str(log_dir), max_queue, flush_secs, filename_suffix
        )

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: Any = None, walltime: Any = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(
        self, summary: Summary, global_step: Any = None, walltime: Any = None
    ) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


# SummaryWriter's methods that are refused, with the reason
_REFUSED = {
    "add_graph": "torch draws the graph from a TorchScript trace, which compat does "
    "not have",
    "add_onnx_graph": "compat does not read ONNX graphs",
    "add_embedding": "the embedding projector's files are not written by compat",
    "add_video": "video summaries are not implemented",
    "add_audio": "audio summaries are not implemented",
    "add_mesh": "mesh summaries are not implemented",
    "add_pr_curve": "PR-curve summaries are not implemented",
    "add_pr_curve_raw": "PR-curve summaries are not implemented",
    "add_custom_scalars": "custom-scalar layouts are not implemented",
    "add_custom_scalars_multilinechart": "custom-scalar layouts are not implemented",
    "add_custom_scalars_marginchart": "custom-scalar layouts are not implemented",
    "add_image_with_boxes": "box drawing is not implemented: draw the boxes with "
    "torchvision.utils.draw_bounding_boxes-style code and use add_image",
    "add_tensor": "tensor summaries are not implemented",
}


class SummaryWriter:
    """Writes entries to event files in ``log_dir`` for TensorBoard, as torch's.

    ``log_dir`` defaults to ``runs/<Mon DD_HH-MM-SS>_<hostname><comment>``.
    """

    def __init__(
        self,
        log_dir: Any = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join(
                "runs", current_time + "_" + socket.gethostname() + comment
            )
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()
        # TensorFlow's default buckets: +-1e-12 growing by 10% to 1e20, and 0
        v, buckets = 1e-12, []
        while v < 1e20:
            buckets.append(v)
            v *= 1.1
        self.default_bins = [-b for b in reversed(buckets)] + [0] + buckets

    def _get_file_writer(self) -> FileWriter:
        """The run's writer, opened again after ``close()``."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(
                    Event(step=step, file_version="brain.Event:2")
                )
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START))
                )
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def add_hparams(
        self,
        hparam_dict: dict,
        metric_dict: dict,
        hparam_domain_discrete: dict | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """The hyperparameters and metrics, in a sub-run ``run_name`` (the time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(
            self._get_file_writer().get_logdir(), run_name or str(time.time())
        )
        with SummaryWriter(log_dir=logdir) as run:
            for summary in summaries:
                run.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                run.add_scalar(k, v, global_step)

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: Any = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        summary = scalar(tag, scalar_value, new_style, double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict,
        global_step: Any = None,
        walltime: float | None = None,
    ) -> None:
        """Each scalar into its own run, ``<log_dir>/<main_tag>_<tag>``, as torch."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if run not in self.all_writers:
                self.all_writers[run] = FileWriter(
                    run, self.max_queue, self.flush_secs, self.filename_suffix
                )
            self.all_writers[run].add_summary(
                scalar(main_tag, value), global_step, walltime
            )

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: Any = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        summary = histogram(tag, values, bins, max_bins=max_bins)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_histogram_raw(
        self,
        tag: str,
        min: float,
        max: float,
        num: int,
        sum: float,
        sum_squares: float,
        bucket_limits: list,
        bucket_counts: list,
        global_step: Any = None,
        walltime: float | None = None,
    ) -> None:
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError(
                "len(bucket_limits) != len(bucket_counts), see the document."
            )
        proto = HistogramProto(
            min=min,
            max=max,
            num=num,
            sum=sum,
            sum_squares=sum_squares,
            bucket_limit=bucket_limits,
            bucket=bucket_counts,
        )
        summary = Summary(value=[Summary.Value(tag=tag, histo=proto)])
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: Any = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """One image, floats in [0, 1] or uint8 in [0, 255]."""
        summary = image(tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: Any = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """A batch of images, tiled eight to a row into one image, as torch."""
        summary = image(tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: Any = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """A matplotlib figure (or a list of them) as an image."""
        import matplotlib.pyplot as plt
        import numpy as np
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        def render(fig: Any) -> np.ndarray:  # (3, H, W)
            canvas = FigureCanvasAgg(fig)
            canvas.draw()
            w, h = fig.canvas.get_width_height()
            rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
            if close:
                plt.close(fig)
            return np.moveaxis(rgba.reshape(h, w, 4)[:, :, :3], 2, 0)

        if isinstance(figure, list):
            images = np.stack([render(f) for f in figure])
            self.add_images(tag, images, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, render(figure), global_step, walltime, "CHW")

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: Any = None,
        walltime: float | None = None,
    ) -> None:
        summary = text(tag, text_string)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def flush(self) -> None:
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Flushes and closes every event file; a second close does nothing."""
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        if name in _REFUSED:
            raise NotOffered(
                f"SummaryWriter.{name} is not supported by jaxblitz.compat: "
                f"{_REFUSED[name]}"
            )
        raise AttributeError(
            f"'{type(self).__name__}' object has no attribute '{name}'"
        )
