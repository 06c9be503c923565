"""Configuration: the one loader of every configuration file (`load`: configs/*.toml and the probe,
template, judges and prices files a user hands in, each read strictly and validated by its typed
model, every problem in one error style).

Nothing is imported here, so `judgebench.config.defaults` stays a plain read at CLI start-up.
"""
