#include <iostream>
#include "hw/config.h"
int main() { std::cout << ccreplay::DefaultTps186().name << "\n"; }
