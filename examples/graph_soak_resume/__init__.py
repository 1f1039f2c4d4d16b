"""A graph workflow for ``adk-actors chaos soak`` whose killed runs are resumed
(``App(resume_interrupted=N)``): examples/graph_soak's graph with every side-effecting
node declared safe to run again, each node's start logged outside the host."""
