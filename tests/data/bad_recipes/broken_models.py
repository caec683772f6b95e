class Net(:
    pass
