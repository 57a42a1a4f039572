print("faultline")
