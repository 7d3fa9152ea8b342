// Package stagetime marks the moments a fence run passes from one stage
// to the next (main, the policy loaded or taken from the plan cache, the
// plan, its lowering, the sandbox child started and ready, the command's
// end), for the benchmark that breaks a run's start-up down
// (BenchmarkSupervisorStages in package linux).
//
// It does nothing in fence as built and released: Mark is empty and
// compiled away. Only a binary built with the fencestages tag keeps the
// marks, and writes them, as lines of a stage's name and the
// CLOCK_MONOTONIC nanoseconds of the mark, to the file FENCE_STAGES_FILE
// names when the run ends. It must never change what a run does.
package stagetime
