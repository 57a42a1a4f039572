import Faultline
