"""A graph workflow for ``adk-actors chaos soak``: a fan-out (one branch in a process
of its own), a join, side-effecting function nodes counted outside the host, and a
loop back edge."""
