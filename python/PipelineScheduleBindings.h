//===- PipelineScheduleBindings.h - kina.pipeline's C++ side ----*- C++ -*-===//
#ifndef KINA_PYTHON_PIPELINESCHEDULEBINDINGS_H
#define KINA_PYTHON_PIPELINESCHEDULEBINDINGS_H

#include <pybind11/pybind11.h>

/// Adds pipeline_generate, pipeline_read, pipeline_clock and
/// pipeline_rendezvous (Kina/PipelineSchedule) to the module.
void bindPipelineSchedule(pybind11::module_ &m);

#endif // KINA_PYTHON_PIPELINESCHEDULEBINDINGS_H
