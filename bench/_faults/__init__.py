"""The scenarios of `bench/faults.py`: tasks (`tasks`) and sign-ins (`facade`), and the fault proxies' arming
and journals they share (`injection`)."""
