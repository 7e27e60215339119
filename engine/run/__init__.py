"""Running a game: state, the flow machine, decisions, chance, views and the log.

`Game` (engine.run.game) is the one narrow interface every front end, agent, tool and test
drives; the modules beside it each own one idea behind it. This layer may import
`engine.base`, `dsl`, `engine.loading` and `engine.model`, nothing above.
"""
from engine.run.game import Decision, Game, IllegalMove

__all__ = ["Decision", "Game", "IllegalMove"]
