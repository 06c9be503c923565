"""Configuration, one room: the one loader of every configuration file (`load`: configs/*.toml and
the probe, template, judges and prices files a user hands in, each read strictly and validated by its
typed model, every problem in one error style), where the configs, data and cache folders are
(`paths`), and each flag's default, stated once (`defaults`).

Nothing is imported here, so `judgebench.config.defaults` stays a plain read at CLI start-up.
"""
