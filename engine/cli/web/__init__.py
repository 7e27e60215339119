"""The web front end behind `daimyo serve`: an ASGI app (Starlette on uvicorn) with a lobby,
a live board per game over a websocket, hot-seat hand-over, save and resume, and a replay
viewer. The page is plain HTML, JS and CSS shipped in `static/` (no build step, nothing
fetched from the internet). Modules: `rooms` (one game and its authority), `hub` (all games,
bots, storage), `store` (SQLite), `present` (what a seat is sent), `replays`, `app` (routes).
"""
